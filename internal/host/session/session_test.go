package session

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestReuseEnv: DOCKER_SANDBOX_REUSE pins the project's sandbox unless DOCKER_SANDBOX
// names one already; the caller's environment is never written through.
func TestReuseEnv(t *testing.T) {
	ws := "/home/u/project"
	project := "DOCKER_SANDBOX=" + sbx.ProjectName(ws)
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
		reuse   bool
	}{
		{"off", []string{"A=1"}, []string{"A=1"}, false},
		{"on", []string{"A=1", "DOCKER_SANDBOX_REUSE=1"}, []string{"A=1", "DOCKER_SANDBOX_REUSE=1", project}, true},
		{"true", []string{"DOCKER_SANDBOX_REUSE=TRUE"}, []string{"DOCKER_SANDBOX_REUSE=TRUE", project}, true},
		{"other values are off", []string{"DOCKER_SANDBOX_REUSE=yes"}, []string{"DOCKER_SANDBOX_REUSE=yes"}, false},
		{"pinned wins", []string{"DOCKER_SANDBOX_REUSE=1", "DOCKER_SANDBOX=mine"}, []string{"DOCKER_SANDBOX_REUSE=1", "DOCKER_SANDBOX=mine"}, false},
		{"empty pin is no pin", []string{"DOCKER_SANDBOX=", "DOCKER_SANDBOX_REUSE=1"}, []string{"DOCKER_SANDBOX=", "DOCKER_SANDBOX_REUSE=1", project}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(make([]string, 0, len(tc.environ)+4), tc.environ...)
			got, reuse := reuseEnv(in, ws)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.reuse, reuse)
			assert.Equal(t, tc.environ, in[:len(tc.environ)], "the input is unchanged")
			if reuse {
				got[0] = "changed"
				assert.NotEqual(t, "changed", in[:cap(in)][0], "the result does not share the input's memory")
			}
		})
	}
}

func TestEnvMode(t *testing.T) {
	assert.Equal(t, "PI_* only", envMode(sbx.NewEnvPolicy(nil)))
	assert.Contains(t, envMode(sbx.NewEnvPolicy([]string{"DOCKER_SANDBOX_ENV_ALLOWLIST=A,B"})), "allowlist (PI_* and A, B)")
	assert.Contains(t, envMode(sbx.NewEnvPolicy([]string{"DOCKER_SANDBOX_ENV_PASSTHROUGH=1"})), "passthrough")
}
