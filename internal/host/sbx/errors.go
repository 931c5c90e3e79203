package sbx

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Sentinel errors; an *Error wraps one of them (test with errors.Is).
var (
	// ErrMissing: the sandbox does not exist (stderr "no sandbox named").
	ErrMissing = errors.New("sandbox does not exist")
	// ErrRuntime: the sandbox runtime failed to start; the command never ran.
	ErrRuntime = errors.New("sandbox runtime failed to start")
	// ErrTimeout: sbx did not finish in time and was killed.
	ErrTimeout = errors.New("sbx did not answer in time")
	// ErrFailed: sbx exited with a non-zero status for another reason.
	ErrFailed = errors.New("sbx failed")
	// ErrOutput: sbx printed more than allowed or something that is not valid.
	ErrOutput = errors.New("invalid output from sbx")
	// ErrSignedOut: sbx is not signed in to Docker; nothing ran. Its exit status (1) is
	// the one a command's own failure has, so it is told apart by its message.
	ErrSignedOut = errors.New("sbx is signed out — run `sbx login`")
	// ErrNotFound: the sbx program was not found (see FindBin).
	ErrNotFound = errors.New("sbx not found")
	// ErrTooOld: the installed sbx is older than MinVersion.
	ErrTooOld = errors.New("sbx is too old")
	// ErrNoPreset: no network preset was ever chosen, so sbx wanted to ask for one
	// before running a sandbox; with --no-input it refused instead. Nothing ran.
	ErrNoPreset = errors.New("sbx has no network policy yet — run `sbx policy init balanced` " +
		"(or deny-all, allow-all) once, then retry")
	// ErrNeedsInput: sbx needed an answer (a prompt) and --no-input made it fail; its
	// message names the command to run.
	ErrNeedsInput = errors.New("sbx wanted to ask a question and was told not to (--no-input)")
	// ErrHung: sbx stopped answering altogether (every command hangs, e.g. a stalled
	// token refresh, SBX#542); see Client.Probe.
	ErrHung = errors.New("sbx is not answering")
)

// Error describes a failed sbx invocation.
type Error struct {
	Op       string // "exec", "create", "ls", …
	Sandbox  string // may be empty
	ExitCode int    // -1 when sbx did not exit normally
	Stderr   string // the tail of sbx's stderr, trimmed
	Err      error  // one of the sentinels above, or a start error
}

// Error says which sbx call failed, how, and what sbx printed.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("sbx ")
	b.WriteString(e.Op)
	if e.Sandbox != "" {
		fmt.Fprintf(&b, " %s", e.Sandbox)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.ExitCode > 0 {
		fmt.Fprintf(&b, " (exit status %d)", e.ExitCode)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, ": %s", e.Stderr)
	}
	return b.String()
}

// Unwrap returns the sentinel (or start error), for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

var (
	// Both of real sbx's wordings: `ERROR: no sandbox named 'N'` and `Error: sandbox 'N'
	// not found` (TP, 0.42.1).
	missingRE = regexp.MustCompile(`no sandbox named|sandbox '[^']*' not found`)
	// Signed out: `Not authenticated to Docker` (ls, TP 0.42.1) and `You are not
	// authenticated to Docker` (Docker's troubleshooting page), on a line of their own
	// after sbx's error prefix, so that a command that merely prints the words is not
	// mistaken for it.
	signedOutRE = regexp.MustCompile(`(?m)^(?:(?:ERROR|Error|error):\s*)?(?:You are not|Not) authenticated to Docker`)
	// Signatures of a sandbox whose runtime never started, so the command never ran.
	runtimeRE = regexp.MustCompile(`start runtime: request failed: (5\d\d|409)|failed to start sandbox: start runtime|docker daemon failed to start inside the sandbox`)
)

// Prompt refusals under --no-input: sbx's error line names the flag or the command to run
// instead (`sbx policy init …` for the network preset, SBX automation page); a declined
// prompt also exits non-zero. Matched on a line sbx prefixed as its error, so that a
// command that merely prints the words is not mistaken for it.
var (
	noInputRE  = regexp.MustCompile(`(?m)^(?:ERROR|Error|error):.*(?:--no-input|\bsbx policy init\b|stdin is not a terminal)`)
	noPresetRE = regexp.MustCompile(`(?m)^(?:ERROR|Error|error):.*\bsbx policy init\b`)
)

// classify maps a non-zero sbx exit to a sentinel from its stderr. For exec, a non-zero
// exit that matches neither pattern is the command's own status (nil).
func classify(op string, code int, stderr string) error {
	switch {
	case code == 0:
		return nil
	case code == 1 && signedOutRE.MatchString(stderr):
		return ErrSignedOut
	case missingRE.MatchString(stderr) && (op != "exec" || code == 1):
		// exec: sbx exits 1 for a missing sandbox; another status is the command's own.
		return ErrMissing
	case runtimeRE.MatchString(stderr):
		return ErrRuntime
	case op == "create" && quotaRE.MatchString(stderr):
		return ErrQuota
	case noPresetRE.MatchString(stderr):
		return ErrNoPreset
	case noInputRE.MatchString(stderr):
		return ErrNeedsInput
	case op == "exec":
		return nil
	default:
		return ErrFailed
	}
}
