package agentlink

import (
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// perCallHint is the advice for an agent channel that failed to start: some sbx versions
// do not forward stdin to exec, which the per-call transport does without. When sbx
// named the reason itself (the sandbox is gone, sbx is signed out, its runtime did not
// start), that is the whole story, and the hint would only mislead.
func perCallHint(err error) string {
	for _, known := range []error{sbx.ErrMissing, sbx.ErrSignedOut, sbx.ErrRuntime, sbx.ErrNotFound, sbx.ErrTooOld} {
		if errors.Is(err, known) {
			return ""
		}
	}
	return " (if this sbx does not forward stdin, try --transport per-call)"
}
