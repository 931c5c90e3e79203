package agentlink

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

func TestPerCallHint(t *testing.T) {
	tests := []struct {
		name string
		err  error
		hint bool
	}{
		{"no reason given", errors.New("the MCP connection ended: reading: unexpected EOF"), true},
		{"an exec that exited 0", errors.Join(errors.New("EOF"), errors.New("it exited")), true},
		{"sandbox removed", errors.Join(errors.New("EOF"), &sbx.Error{Op: "exec", Err: sbx.ErrMissing}), false},
		{"signed out", fmt.Errorf("wrapped: %w", &sbx.Error{Op: "exec", Err: sbx.ErrSignedOut}), false},
		{"runtime failed", &sbx.Error{Op: "exec", Err: sbx.ErrRuntime}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.hint, perCallHint(tc.err) != "")
		})
	}
}
