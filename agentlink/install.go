// Package agentlink is the host's channel to the in-sandbox agent (`pi-sbx-backend agent`,
// an MCP server with the seven tools): it installs the agent binary in the VM, starts it
// over one persistent `sbx exec -i`, multiplexes calls on it and restarts it after a
// crash; PerCall is the fallback that runs every call as its own `sbx exec`.
package agentlink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/pi-sbx/pi-sbx-backend/agentbin"
	"github.com/pi-sbx/pi-sbx-backend/sbx"
)

// Installer puts the agent binary into a sandbox's VM, at a path named by version and
// content hash, verified by sha256 — never into the workspace.
type Installer struct {
	Sbx     *sbx.Client
	Version string
	// Agents finds the agent binary for the VM's architecture (agentbin.Default() when nil).
	Agents *agentbin.Finder
	// Dir is the directory in the VM (/tmp when empty).
	Dir string
	// ChunkSize is the base64 bytes per exec of the argv fallback (96 KiB when zero,
	// under Linux's 128 KiB limit on one argument).
	ChunkSize int

	mu        sync.Mutex
	installed map[string]string // sandbox → agent path
}

// archNames maps `uname -m` to Go's GOARCH.
var archNames = map[string]string{
	"x86_64": "amd64", "amd64": "amd64",
	"aarch64": "arm64", "arm64": "arm64",
}

var unsafeVersion = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// Install returns the agent's path in the sandbox, installing it when it is not there
// with the right hash. Results are remembered per sandbox; Forget drops one.
func (in *Installer) Install(ctx context.Context, sandbox string) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if p, ok := in.installed[sandbox]; ok {
		return p, nil
	}
	p, err := in.install(ctx, sandbox)
	if err != nil {
		return "", fmt.Errorf("installing the agent in sandbox %s: %w", sandbox, err)
	}
	if in.installed == nil {
		in.installed = map[string]string{}
	}
	in.installed[sandbox] = p
	return p, nil
}

// Forget makes the next Install check the sandbox again (after the agent failed to start).
func (in *Installer) Forget(sandbox string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.installed, sandbox)
}

func (in *Installer) dir() string {
	if in.Dir != "" {
		return in.Dir
	}
	return "/tmp"
}

func (in *Installer) install(ctx context.Context, sandbox string) (string, error) {
	// One exec answers both questions: the VM's architecture and what is installed.
	probe := `uname -m; for f in "$1"/pi-sbx-agent-*; do [ -f "$f" ] && sha256sum "$f"; done; true`
	res, err := in.Sbx.Exec(ctx, sandbox, []string{"sh", "-c", probe, "sh", in.dir()}, sbx.ExecOpts{MaxOutput: 1 << 20})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("probing the VM: exit status %d: %s", res.ExitCode, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	arch, ok := archNames[strings.TrimSpace(lines[0])]
	if !ok {
		return "", fmt.Errorf("unsupported VM architecture %q", lines[0])
	}
	if in.Agents == nil { // kept: the Finder hashes each agent once
		in.Agents = agentbin.Default()
	}
	local, err := in.Agents.Find(arch)
	if err != nil {
		return "", err
	}
	sum := local.SHA256
	target := fmt.Sprintf("%s/pi-sbx-agent-%s-%s", in.dir(), unsafeVersion.ReplaceAllString(in.Version, "_"), sum[:8])
	// Agents of other versions or builds (a warm sandbox kept from an older serve) are
	// replaced: removed once this one is in place, never run.
	var stale []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if f[1] == target && f[0] == sum {
			return target, nil
		}
		if f[1] != target && !strings.Contains(filepath.Base(f[1]), ".tmp") { // not another install's file in flight
			stale = append(stale, f[1])
		}
	}
	streamErr := in.stream(ctx, sandbox, local, target, sum, stale)
	if streamErr == nil {
		return target, nil
	}
	if errors.Is(streamErr, sbx.ErrMissing) || ctx.Err() != nil {
		return "", streamErr
	}
	// Some sbx versions do not forward stdin reliably: fall back to argv.
	if err := in.chunks(ctx, sandbox, local, target, sum, stale); err != nil {
		return "", fmt.Errorf("streaming failed (%v), and so did base64 in argv: %w", streamErr, err)
	}
	return target, nil
}

// stream sends the binary on stdin to a temporary file and renames it into place, then
// removes the stale agents.
func (in *Installer) stream(ctx context.Context, sandbox string, local agentbin.Agent, target, sum string, stale []string) error {
	f, err := local.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	script := `t="$1.tmp.$$"; cat > "$t" && chmod 755 "$t" && mv -f "$t" "$1" && sha256sum "$1"; s=$?; rm -f "$t"; shift; [ $s = 0 ] && rm -f "$@"; exit $s`
	argv := append([]string{"sh", "-c", script, "sh", target}, stale...)
	res, err := in.Sbx.Exec(ctx, sandbox, argv, sbx.ExecOpts{Interactive: true, Stdin: f, MaxOutput: 4096})
	if err != nil {
		return err
	}
	return checkSum(res, target, sum)
}

// chunks writes the binary through argv, base64 in pieces, then renames it into place
// and removes the stale agents.
func (in *Installer) chunks(ctx context.Context, sandbox string, local agentbin.Agent, target, sum string, stale []string) error {
	f, err := local.Open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading the agent: %w", err)
	}
	tmp := target + ".tmp"
	run := func(script string, args ...string) (sbx.ExecResult, error) {
		argv := append([]string{"sh", "-c", script, "sh"}, args...)
		res, err := in.Sbx.Exec(ctx, sandbox, argv, sbx.ExecOpts{MaxOutput: 4096})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit status %d: %s", res.ExitCode, res.Stderr)
		}
		return res, err
	}
	if _, err := run(`rm -f "$1" && : > "$1"`, tmp); err != nil {
		return err
	}
	size := in.ChunkSize
	if size <= 0 {
		size = 96 << 10
	}
	enc := base64.StdEncoding.EncodeToString(data)
	for off := 0; off < len(enc); off += size {
		end := min(off+size, len(enc))
		if _, err := run(`printf %s "$2" | base64 -d >> "$1"`, tmp, enc[off:end]); err != nil {
			return fmt.Errorf("chunk at %d: %w", off, err)
		}
	}
	res, err := run(`chmod 755 "$1" && mv -f "$1" "$2" && sha256sum "$2" && shift 2 && rm -f "$@"`, append([]string{tmp, target}, stale...)...)
	if err != nil {
		return err
	}
	return checkSum(res, target, sum)
}

func checkSum(res sbx.ExecResult, target, sum string) error {
	if res.ExitCode != 0 {
		return fmt.Errorf("writing %s: exit status %d: %s", target, res.ExitCode, res.Stderr)
	}
	sc := bufio.NewScanner(bytes.NewReader(res.Stdout))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == sum && f[1] == target {
			return nil
		}
	}
	return fmt.Errorf("%s in the VM does not have sha256 %s (got %q)", target, sum, strings.TrimSpace(string(res.Stdout)))
}
