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
