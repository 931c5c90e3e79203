package main

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
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

// newDeployer builds the docker_* tools for the session's sandbox.
func newDeployer(s *session.Session) (*deploy.Deployer, error) {
	return deploy.New(deploy.Config{
		Sbx: s.Client, Sandbox: s.Ensure, Name: s.Name, Workspace: s.Workspace,
		ReadOnly: s.ReadOnly, Pinned: s.Pinned, Teardown: s.Teardown,
		Environ: s.Environ, Policy: sbx.NewEnvPolicy(s.Environ), Owners: s.Owners, Home: envValue(s.Environ, "HOME"),
		Removed: s.Session.Removed, SaveWork: s.SaveWork, KeepWork: s.KeepWork,
	})
}

// toolSets is which tool sets serve lists.
type toolSets struct{ pi, docker bool }

// toolMode reads PI_SBX_MODE: tools (pi's seven), deploy (the docker_* tools) or both
// (the default, for MCP clients; the pi package asks for tools unless told otherwise).
// The former PI_SBX_DOCKER_TOOLS=0 is refused with its replacement named, so that
// nobody who asked for no docker tools silently gets them.
func toolMode(environ []string) (toolSets, error) {
	if v := envValue(environ, "PI_SBX_DOCKER_TOOLS"); v != "" {
		return toolSets{}, usagef("PI_SBX_DOCKER_TOOLS=%q is no longer read: use PI_SBX_MODE=tools (pi's seven), deploy (the docker_* tools) or both", v)
	}
	switch v := strings.ToLower(strings.TrimSpace(envValue(environ, "PI_SBX_MODE"))); v {
	case "", "both":
		return toolSets{pi: true, docker: true}, nil
	case "tools":
		return toolSets{pi: true}, nil
	case "deploy":
		return toolSets{docker: true}, nil
	default:
		return toolSets{}, usagef("PI_SBX_MODE=%q: want tools, deploy or both", v)
	}
}

func envValue(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// gcHours reads DOCKER_SANDBOX_GC_HOURS: default 24, 0 = off.
func gcHours(environ []string) (float64, error) {
	v := strings.TrimSpace(envValue(environ, "DOCKER_SANDBOX_GC_HOURS"))
	if v == "" {
		return 24, nil
	}
	h, err := strconv.ParseFloat(v, 64)
	if err != nil || h < 0 || h > 24*365 {
		return 0, usagef("DOCKER_SANDBOX_GC_HOURS=%q: want hours >= 0 (0 = no sweep)", v)
	}
	return h, nil
}

// startupGC sweeps stale sandboxes in the background when a session starts; it never
// delays serving and never touches this session's sandbox.
func startupGC(ctx context.Context, logger *slog.Logger, d *deploy.Deployer, environ []string) error {
	hours, err := gcHours(environ)
	if err != nil || hours == 0 {
		return err
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
	return nil
}
