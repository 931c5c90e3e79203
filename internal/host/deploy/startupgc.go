package deploy

import (
	"context"
	"log/slog"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
)

// StartupGC sweeps, in the background, stale sandboxes older than hours when a session
// starts (DOCKER_SANDBOX_GC_HOURS; 0: none); it never delays serving and never touches
// this session's sandbox. Its verdicts and errors go to logger.
func (d *Deployer) StartupGC(ctx context.Context, logger *slog.Logger, hours float64) {
	if hours == 0 {
		return
	}
	go func() {
		gctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		entries, err := d.GC(gctx, time.Duration(hours*float64(time.Hour)), false)
		if err != nil {
			logger.Warn("startup GC", "error", err)
			return
		}
		for _, e := range entries {
			if e.Verdict != lifecycle.GCKept {
				logger.Info("startup GC", "sandbox", e.Name, "verdict", e.Verdict, "reason", e.Reason)
			}
		}
	}()
}
