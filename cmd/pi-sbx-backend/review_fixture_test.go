package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// refWork is the tests' work source: the sandbox named by FIXTURE_SANDBOX left its work
// at refs/pi-sbx/NAME/{base,head} of the workspace's own repository (what the script
// builds with git). It stands where the sandbox side of review mode plugs in.
type refWork struct{ name string }

func openRefWork(settings.Settings) (workSource, error) {
	if v := os.Getenv("FIXTURE_SANDBOX"); v != "" {
		return refWork{v}, nil
	}
	return nil, fmt.Errorf("no review-mode work for this workspace")
}

func (w refWork) Collect(ctx context.Context, ws string) (review.Changes, error) {
	c := review.Changes{GitDir: filepath.Join(ws, ".git"), Root: ws, Sandbox: w.name, BaseRef: w.refs()[0]}
	g := c.Git(os.Environ())
	for i, p := range []*string{&c.Base, &c.Head} {
		id, err := g.Run(ctx, nil, nil, "rev-parse", "--verify", w.refs()[i])
		if err != nil {
			return c, fmt.Errorf("no kept work of %s: %w", w.name, err)
		}
		*p = strings.TrimSpace(string(id))
	}
	return c, nil
}

// refs are where the script leaves the base and the head.
func (w refWork) refs() []string {
	return []string{"refs/pi-sbx/" + w.name + "/base", "refs/pi-sbx/" + w.name + "/head"}
}

// Discard deletes both refs.
func (w refWork) Discard(ctx context.Context, c review.Changes) error {
	for _, ref := range w.refs() {
		if _, err := c.Git(os.Environ()).Run(ctx, nil, nil, "update-ref", "-d", ref); err != nil {
			return err
		}
	}
	return nil
}

// fixtureMain is pi-sbx-backend with the review commands over refWork.
func fixtureMain() {
	std := stdio{os.Stdin, os.Stdout, os.Stderr}
	os.Exit(runWith(context.Background(), std, os.Args[1:], reviewCommands(openRefWork)))
}
