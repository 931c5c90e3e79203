package sbx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkspaceMode(t *testing.T) {
	for _, tc := range []struct {
		env     []string
		want    string
		wantErr string
	}{
		{nil, ModeRW, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_MODE=review"}, ModeReview, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_MODE=RO"}, ModeRO, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_MODE="}, ModeRW, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=1"}, ModeRO, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=0"}, ModeRW, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=1", "DOCKER_SANDBOX_WORKSPACE_MODE=ro"}, ModeRO, ""},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=1", "DOCKER_SANDBOX_WORKSPACE_MODE=review"}, "", "disagree"},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=0", "DOCKER_SANDBOX_WORKSPACE_MODE=ro"}, "", "disagree"},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_MODE=clone"}, "", "want rw, ro or review"},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=maybe"}, "", "want 1 or 0"},
	} {
		got, err := WorkspaceMode(tc.env)
		if tc.wantErr != "" {
			require.Error(t, err, "%v", tc.env)
			assert.Contains(t, err.Error(), tc.wantErr, "%v", tc.env)
			assert.NotContains(t, err.Error(), "\n", "one line")
			continue
		}
		require.NoError(t, err, "%v", tc.env)
		assert.Equal(t, tc.want, got, "%v", tc.env)
	}
}
