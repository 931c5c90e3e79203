package deploy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContainerFindingsPrivileged: sbxsim's dockerd cannot start a privileged container
// (runc cannot apply every capability there), so that finding is checked on inspect's
// shape.
func TestContainerFindingsPrivileged(t *testing.T) {
	var c inspected
	require.NoError(t, json.Unmarshal([]byte(`{"Name":"/p","HostConfig":{"Privileged":true}}`), &c))
	assert.Equal(t, []string{"privileged"}, (&Deployer{}).containerFindings(c, nil))
}

// TestWithoutGlobals: the transport check judges the verb and its arguments, whatever
// global flags the door put before them.
func TestWithoutGlobals(t *testing.T) {
	for in, want := range map[string]string{
		"exec box -- docker version":            "exec box -- docker version",
		"--no-input exec box -- docker version": "exec box -- docker version",
		"-D --no-input version":                 "version",
		"--no-inputs exec box":                  "--no-inputs exec box",
	} {
		assert.Equal(t, want, withoutGlobals(in), in)
	}
}
