package lifecycle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

func TestProjectName(t *testing.T) {
	tests := []struct {
		workspace string
		prefix    string
	}{
		{"/home/me/my-project", "pi-sbx-my-project-"},
		{"/home/me/my-project/", "pi-sbx-my-project-"},
		{"/home/me/My Project (2)", "pi-sbx-My-Project--2-"},
		{"/srv/ünïcode", "pi-sbx-n-code-"},
		{"/srv/.hidden", "pi-sbx-hidden-"},
		{"/", "pi-sbx-"},
		{"/x/" + strings.Repeat("long", 30), "pi-sbx-" + strings.Repeat("long", 30)[:47] + "-"},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		name := ProjectName(tc.workspace)
		assert.NoError(t, sbx.ValidateName(name), tc.workspace)
		assert.True(t, strings.HasPrefix(name, tc.prefix), "%s: %s", tc.workspace, name)
		assert.Len(t, name, len(tc.prefix)+8, "%s: %s", tc.workspace, name)
		assert.Equal(t, name, ProjectName(tc.workspace), "stable")
		seen[name] = tc.workspace
	}
	assert.Equal(t, ProjectName("/a/my-project"), ProjectName("/a/my-project/."), "the path is cleaned")
	assert.NotEqual(t, ProjectName("/a/my-project"), ProjectName("/b/my-project"), "same basename, different projects")
}

// TestProjectNameIsACloudName: a project's sandbox has a name the cloud takes.
func TestProjectNameIsACloudName(t *testing.T) {
	assert.NoError(t, sbx.ValidateCloudName(sbx.CloudName(ProjectName("/home/u/site.example.com"))))
}
