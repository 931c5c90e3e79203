package sbx

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResourcesFromEnv(t *testing.T) {
	tests := []struct {
		env  []string
		args []string
		err  string
	}{
		{nil, nil, ""},
		{[]string{"DOCKER_SANDBOX_CPUS=4", "DOCKER_SANDBOX_MEMORY=8g", "DOCKER_SANDBOX_TEMPLATE=docker/sandbox-templates:shell"},
			[]string{"--cpus", "4", "--memory", "8g", "--template", "docker/sandbox-templates:shell"}, ""},
		{[]string{"DOCKER_SANDBOX_CPUS=0"}, []string{"--cpus", "0"}, ""},
		{[]string{"DOCKER_SANDBOX_MEMORY=512MiB"}, []string{"--memory", "512MiB"}, ""},
		{[]string{"DOCKER_SANDBOX_MEMORY=1073741824"}, []string{"--memory", "1073741824"}, ""},
		{[]string{"DOCKER_SANDBOX_CPUS=-1"}, nil, "whole number"},
		{[]string{"DOCKER_SANDBOX_CPUS=1.5"}, nil, "whole number"},
		{[]string{"DOCKER_SANDBOX_MEMORY=256m"}, nil, "minimum is 512 MiB"},
		{[]string{"DOCKER_SANDBOX_MEMORY=lots"}, nil, "512m"},
		{[]string{"DOCKER_SANDBOX_MEMORY=--rm"}, nil, "512m"},
		{[]string{"DOCKER_SANDBOX_TEMPLATE=--privileged"}, nil, "image reference"},
		{[]string{"DOCKER_SANDBOX_TEMPLATE=a b"}, nil, "image reference"},
	}
	for _, tt := range tests {
		r, err := ResourcesFromEnv(tt.env)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%v", tt.env)
			continue
		}
		require.NoError(t, err, "%v", tt.env)
		assert.Equal(t, tt.args, r.Args(), "%v", tt.env)
	}
}

// TestSessionCreatesWithResourcesAndOwnerRecord: the create options reach sbx create, the
// owner record is written for GC, and removed with the sandbox.
func TestSessionCreatesWithResourcesAndOwnerRecord(t *testing.T) {
	f := &fakeRunner{answer: func(_ context.Context, c Cmd) (int, string, string) {
		if c.Args[0] == "ls" {
			return 0, `{"sandboxes":[]}`, ""
		}
		return 0, "", ""
	}}
	s, err := NewSession(&Client{Bin: "sbx", Runner: f}, []string{"DOCKER_SANDBOX_CPUS=2", "DOCKER_SANDBOX_MEMORY=1g", "DOCKER_SANDBOX_TEMPLATE=my/template:1"}, 0, "/ws", nil)
	require.NoError(t, err)
	s.Owners = &Owners{Dir: t.TempDir()}
	_, err = s.Ensure(context.Background())
	require.NoError(t, err)
	assert.Contains(t, f.argvs(), "create --name "+s.Name+" --cpus 2 --memory 1g --template my/template:1 --pull missing shell /ws")
	rec, err := s.Owners.Read(s.Name)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), rec.PID)
	assert.Equal(t, "/ws", rec.Workspace)
	require.NoError(t, s.Close(context.Background()))
	_, err = s.Owners.Read(s.Name)
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = NewSession(&Client{Bin: "sbx", Runner: f}, []string{"DOCKER_SANDBOX_MEMORY=100m"}, 0, "/ws", nil)
	assert.ErrorContains(t, err, "512 MiB")
}
