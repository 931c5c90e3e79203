package session

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

func TestEnvMode(t *testing.T) {
	assert.Equal(t, "PI_* only", envMode(sbx.EnvPolicy{}))
	assert.Contains(t, envMode(sbx.EnvPolicy{Allow: []string{"A", "B"}}), "allowlist (PI_* and A, B)")
	assert.Contains(t, envMode(sbx.EnvPolicy{Passthrough: true}), "passthrough")
}
