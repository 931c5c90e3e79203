//go:build linux

package sbxsim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// lookTool finds a system program on the sandbox default PATH, whatever the caller's
// PATH is (the backend runs sbx with a scrubbed environment).
func lookTool(name string) (string, error) {
	for _, d := range filepath.SplitList(defaultPath) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on %s (see scripts/setup.sh)", name, defaultPath)
}

// runTool runs a system program to completion with a minimal environment; the error
// carries its output.
func runTool(ctx context.Context, stdin io.Reader, name string, args ...string) (string, error) {
	path, err := lookTool(name)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"PATH=" + defaultPath}
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}
