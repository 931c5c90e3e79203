// Package agentlink is the host's channel to the in-sandbox agent (`pi-sbx-backend agent`,
// an MCP server with the seven tools): it installs the agent binary in the VM, starts it
// over one persistent `sbx exec -i`, multiplexes calls on it and restarts it after a
// crash; PerCall is the fallback that runs every call as its own `sbx exec`.
package agentlink

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
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
	installed map[string]installed // by sandbox
}

// installed is an agent put in a VM: its path there, its content's sha256, and the
// file's identity when that hash was checked (see fingerprint).
type installed struct{ path, sum, fp string }

// fingerprint is the stat(1) format of a file's identity: inode, size, and the times of
// its last modification and status change, to the nanosecond. Replacing the file (a
// rename over it) or writing into it changes it; setting the status-change time back is
// not something a process can ask for.
const fingerprint = "%i %s %y %z"

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
	a, err := in.ensure(ctx, sandbox)
	return a.path, err
}

// Command is Install's agent as the argv that runs it in the sandbox with args. The
// binary's hash is checked again in the VM just before it runs, so an agent replaced or
// damaged since it was installed is never run: the command exits 126 instead, as for a
// binary that is gone, and the caller has it installed again (Forget).
func (in *Installer) Command(ctx context.Context, sandbox string, args ...string) ([]string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	a, err := in.ensure(ctx, sandbox)
	if err != nil {
		return nil, err
	}
	return append([]string{"sh", "-c", verifiedRun, "sh", a.sum, a.fp, a.path}, args...), nil
}

// verifiedRun runs "$3" with the arguments after it if it is still the file whose sha256
// "$1" was checked at install: its fingerprint is "$2". Hashing the binary again before
// every run cost the per-call transport 60–100 ms a call (p50 11–18 → 74–116 ms);
// a stat costs nothing next to the sbx exec.
const verifiedRun = `[ "$(stat -c '` + fingerprint + `' "$3" 2>/dev/null)" = "$2" ] || { echo "pi-sbx-backend: $3 in the VM was replaced or changed since its sha256 $1 was checked; installing it again" >&2; exit 126; }; a=$3; shift 3; exec "$a" "$@"`

// ensure is Install under in.mu.
func (in *Installer) ensure(ctx context.Context, sandbox string) (installed, error) {
	if a, ok := in.installed[sandbox]; ok {
		return a, nil
	}
	a, err := in.install(ctx, sandbox)
	if err != nil {
		return installed{}, fmt.Errorf("installing the agent in sandbox %s: %w", sandbox, err)
	}
	if in.installed == nil {
		in.installed = map[string]installed{}
	}
	in.installed[sandbox] = a
	return a, nil
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

func (in *Installer) install(ctx context.Context, sandbox string) (installed, error) {
	// One exec answers both questions: the VM's architecture and what is installed. It
	// also removes temporary files of installs that died mid-way (a killed serve or VM):
	// one not written to for ten minutes is finished by no one.
	probe := `uname -m; find "$1" -maxdepth 1 -name 'pi-sbx-agent-*.tmp.*' -mmin +10 -exec rm -f {} + 2>/dev/null; for f in "$1"/pi-sbx-agent-*; do [ -f "$f" ] && sha256sum "$f" && stat -c 'fp ` + fingerprint + `' "$f"; done; true`
	res, err := in.Sbx.Exec(ctx, sandbox, []string{"sh", "-c", probe, "sh", in.dir()}, sbx.ExecOpts{MaxOutput: 1 << 20})
	if err != nil {
		return installed{}, err
	}
	if res.ExitCode != 0 {
		return installed{}, fmt.Errorf("probing the VM: exit status %d: %s", res.ExitCode, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	arch, ok := archNames[strings.TrimSpace(lines[0])]
	if !ok {
		return installed{}, fmt.Errorf("unsupported VM architecture %q", lines[0])
	}
	if in.Agents == nil { // kept: the Finder hashes each agent once
		in.Agents = agentbin.Default()
	}
	local, err := in.Agents.Find(arch)
	if err != nil {
		return installed{}, err
	}
	sum := local.SHA256
	target := fmt.Sprintf("%s/pi-sbx-agent-%s-%s", in.dir(), unsafeVersion.ReplaceAllString(in.Version, "_"), sum[:8])
	// Agents of other versions or builds (a warm sandbox kept from an older serve) are
	// replaced: removed once this one is in place, never run.
	var stale []string
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue // a fingerprint, after its file's sum
		}
		if f[1] == target && f[0] == sum {
			if fp, ok := fingerprintLine(lines[1+i+1:]); ok {
				return installed{target, sum, fp}, nil
			}
		}
		if f[1] != target && !strings.Contains(filepath.Base(f[1]), ".tmp") { // not another install's file in flight
			stale = append(stale, f[1])
		}
	}
	tmp, err := tempName(target)
	if err != nil {
		return installed{}, err
	}
	if in.Sbx.Cloud {
		// Over a WAN every chunk of a stream waits for the round trip: one cp is one.
		fp, err := in.copyIn(ctx, sandbox, local, tmp, target, sum, stale)
		if err == nil {
			return installed{target, sum, fp}, nil
		}
		if errors.Is(err, sbx.ErrMissing) || ctx.Err() != nil {
			return installed{}, err
		}
		// A cp that failed: the stream below may still work.
	}
	fp, streamErr := in.stream(ctx, sandbox, local, tmp, target, sum, stale)
	if streamErr == nil {
		return installed{target, sum, fp}, nil
	}
	if errors.Is(streamErr, sbx.ErrMissing) || ctx.Err() != nil {
		in.removeTemp(ctx, sandbox, tmp)
		return installed{}, streamErr
	}
	// Some sbx versions do not forward stdin reliably: fall back to argv.
	fp, err = in.chunks(ctx, sandbox, local, tmp, target, sum, stale)
	if err != nil {
		in.removeTemp(ctx, sandbox, tmp)
		return installed{}, fmt.Errorf("streaming failed (%v), and so did base64 in argv: %w", streamErr, err)
	}
	return installed{target, sum, fp}, nil
}

// fingerprintLine is the fingerprint on the first of lines, if it is one ("fp …").
func fingerprintLine(lines []string) (string, bool) {
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "fp ") {
		return "", false
	}
	return strings.TrimPrefix(lines[0], "fp "), true
}

// tempName is where an install writes before the rename: named by the host, so that a
// failed install removes its own file and never another serve's in flight.
func tempName(target string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("naming the agent's temporary file: %w", err)
	}
	return target + ".tmp." + hex.EncodeToString(b[:]), nil
}

// removeTemp removes a failed install's temporary file from the VM, best effort (the
// next install's probe removes it later if this fails too): the call's context may be
// what ended the install, so it gets a short one of its own.
func (in *Installer) removeTemp(ctx context.Context, sandbox, tmp string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = in.Sbx.Exec(ctx, sandbox, []string{"rm", "-f", tmp}, sbx.ExecOpts{MaxOutput: 4096})
}

// sumThenPlace is the shell that checks the temporary file "$1" has sha256 "$3" before
// it becomes the agent "$2" (so a short or damaged copy is never in place), then prints
// the placed file's sum and fingerprint and removes the stale agents after "$3".
const sumThenPlace = `h=$(sha256sum "$1") && { [ "${h%% *}" = "$3" ] || { echo "the copy has sha256 ${h%% *}, not $3" >&2; false; }; } && chmod 755 "$1" && mv -f "$1" "$2" && sha256sum "$2" && stat -c 'fp ` + fingerprint + `' "$2" && shift 3 && rm -f "$@"`

// stream sends the binary on stdin to the temporary file tmp and renames it into place,
// then removes the stale agents.
func (in *Installer) stream(ctx context.Context, sandbox string, local agentbin.Agent, tmp, target, sum string, stale []string) (fp string, err error) {
	f, err := local.Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	script := `t=$1; cat > "$t" && ` + sumThenPlace + `; s=$?; rm -f "$t"; exit $s`
	argv := append([]string{"sh", "-c", script, "sh", tmp, target, sum}, stale...)
	res, err := in.Sbx.Exec(ctx, sandbox, argv, sbx.ExecOpts{Interactive: true, Stdin: f, MaxOutput: 4096})
	if err != nil {
		return "", err
	}
	return checkSum(res, target, sum)
}

// copyIn copies the binary into a cloud sandbox's VM with one `sbx --cloud cp`, then
// copies it again as the agent user to the temporary file tmp (what cp wrote may be
// root's, in a sticky /tmp) and places it as stream does, checked by its sha256.
func (in *Installer) copyIn(ctx context.Context, sandbox string, local agentbin.Agent, tmp, target, sum string, stale []string) (fp string, err error) {
	dir, err := os.MkdirTemp("", "pi-sbx-agent-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent")
	if err := writeAgent(local, path); err != nil {
		return "", err
	}
	copied := tmp + ".cp"
	if err := in.Sbx.Cp(ctx, path, sandbox+":"+copied); err != nil {
		return "", err
	}
	script := `c=$1 t=$2; shift; cat "$c" > "$t" && { rm -f "$c" 2>/dev/null || :; } && ` + sumThenPlace + `; s=$?; rm -f "$t"; exit $s`
	argv := append([]string{"sh", "-c", script, "sh", copied, tmp, target, sum}, stale...)
	res, err := in.Sbx.Exec(ctx, sandbox, argv, sbx.ExecOpts{MaxOutput: 4096})
	if err != nil {
		return "", err
	}
	return checkSum(res, target, sum)
}

// writeAgent writes the agent binary to path.
func writeAgent(local agentbin.Agent, path string) error {
	r, err := local.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// chunks writes the binary through argv, base64 in pieces, to the temporary file tmp,
// then renames it into place and removes the stale agents.
func (in *Installer) chunks(ctx context.Context, sandbox string, local agentbin.Agent, tmp, target, sum string, stale []string) (fp string, err error) {
	f, err := local.Open()
	if err != nil {
		return "", err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("reading the agent: %w", err)
	}
	run := func(script string, args ...string) (sbx.ExecResult, error) {
		argv := append([]string{"sh", "-c", script, "sh"}, args...)
		res, err := in.Sbx.Exec(ctx, sandbox, argv, sbx.ExecOpts{MaxOutput: 4096})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit status %d: %s", res.ExitCode, res.Stderr)
		}
		return res, err
	}
	if _, err := run(`rm -f "$1" && : > "$1"`, tmp); err != nil {
		return "", err
	}
	size := in.ChunkSize
	if size <= 0 {
		size = 96 << 10
	}
	enc := base64.StdEncoding.EncodeToString(data)
	for off := 0; off < len(enc); off += size {
		end := min(off+size, len(enc))
		if _, err := run(`printf %s "$2" | base64 -d >> "$1"`, tmp, enc[off:end]); err != nil {
			return "", fmt.Errorf("chunk at %d: %w", off, err)
		}
	}
	res, err := run(sumThenPlace, append([]string{tmp, target, sum}, stale...)...)
	if err != nil {
		return "", err
	}
	return checkSum(res, target, sum)
}

// checkSum finds the placed agent's sum in an install's output and returns the
// fingerprint printed after it.
func checkSum(res sbx.ExecResult, target, sum string) (fp string, err error) {
	if res.ExitCode != 0 {
		return "", fmt.Errorf("writing %s: exit status %d: %s", target, res.ExitCode, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 2 && f[0] == sum && f[1] == target {
			if fp, ok := fingerprintLine(lines[i+1:]); ok {
				return fp, nil
			}
			return "", fmt.Errorf("%s in the VM: no fingerprint after its sum (got %q)", target, strings.TrimSpace(string(res.Stdout)))
		}
	}
	return "", fmt.Errorf("%s in the VM does not have sha256 %s (got %q)", target, sum, strings.TrimSpace(string(res.Stdout)))
}
