package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/deploy"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/session"
)

// deployEnv documents the variables of the docker_* tools and GC.
var deployEnv = []envDoc{
	{"DOCKER_SANDBOX_CPUS, _MEMORY, _TEMPLATE", "sbx create --cpus (whole number, 0 = all), --memory (>= 512m), --template"},
	{"PI_SBX_MODE=tools|deploy|both", "the tools serve lists: pi's seven, the docker_* tools, or both (default both; the pi package starts serve with tools unless set)"},
	{"DOCKER_SANDBOX_GC_HOURS", "at session start, remove stale pi-sbx-* sandboxes older than this (default 24, 0 = off)"},
	{"XDG_STATE_HOME", "owner records for GC live in $XDG_STATE_HOME/pi-sbx-backend/owners (default ~/.local/state)"},
}

// newDeployer builds the docker_* tools for the session's sandbox; forceGC is gc --force.
func newDeployer(s *session.Session, forceGC bool) (*deploy.Deployer, error) {
	return deploy.New(deploy.Config{
		Sbx: s.Client, Sandbox: s.Ensure, Name: s.Name, Workspace: s.Workspace,
		ReadOnly: s.ReadOnly, Pinned: s.Pinned, Teardown: s.Teardown,
		Settings: s.Settings, Owners: s.Owners,
		Removed: s.Session.Removed, SaveWork: s.SaveWork, KeepWork: s.KeepWork, ForceGC: forceGC,
	})
}

// startupGC sweeps stale sandboxes in the background when a session starts; it never
// delays serving and never touches this session's sandbox.
func startupGC(ctx context.Context, logger *slog.Logger, d *deploy.Deployer, hours float64) {
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
			if e.Verdict != sbx.GCKept {
				logger.Info("startup GC", "sandbox", e.Name, "verdict", e.Verdict, "reason", e.Reason)
			}
		}
	}()
}
