package sbx

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResources(t *testing.T) {
	tests := []struct {
		r    Resources
		args []string
		err  string
	}{
		{Resources{}, nil, ""},
		{Resources{CPUs: "4", Memory: "8g", Template: "docker/sandbox-templates:shell"},
			[]string{"--cpus", "4", "--memory", "8g", "--template", "docker/sandbox-templates:shell"}, ""},
		{Resources{CPUs: "0"}, []string{"--cpus", "0"}, ""},
		{Resources{Memory: "512MiB"}, []string{"--memory", "512MiB"}, ""},
		{Resources{Memory: "1073741824"}, []string{"--memory", "1073741824"}, ""},
		{Resources{CPUs: "-1"}, nil, "DOCKER_SANDBOX_CPUS=\"-1\": want a whole number"},
		{Resources{CPUs: "1.5"}, nil, "whole number"},
		{Resources{Memory: "256m"}, nil, "minimum is 512 MiB"},
		{Resources{Memory: "lots"}, nil, "512m"},
		{Resources{Memory: "--rm"}, nil, "512m"},
		{Resources{Template: "--privileged"}, nil, "image reference"},
		{Resources{Template: "a b"}, nil, "image reference"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%+v", tt.r)
			continue
		}
		require.NoError(t, err, "%+v", tt.r)
		assert.Equal(t, tt.args, tt.r.Args(), "%+v", tt.r)
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
	s, err := NewSession(&Client{Bin: "sbx", Runner: f}, SessionOptions{
		Resources: Resources{CPUs: "2", Memory: "1g", Template: "my/template:1"}, Owners: &Owners{Dir: t.TempDir()}, Workspace: "/ws"})
	require.NoError(t, err)
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

	_, err = NewSession(&Client{Bin: "sbx", Runner: f}, SessionOptions{Resources: Resources{Memory: "100m"}, Workspace: "/ws"})
	assert.ErrorContains(t, err, "512 MiB")
}
