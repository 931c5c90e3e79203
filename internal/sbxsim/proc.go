//go:build linux

package sbxsim

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc identifies a process across sbxsim invocations: its pid and its start time (in
// clock ticks since boot), so that a recycled pid is never mistaken for it.
type Proc struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// procOf returns the Proc of a live pid.
func procOf(pid int) (*Proc, error) {
	st, state, err := procStat(pid)
	if err != nil {
		return nil, err
	}
	if state == "Z" || state == "X" {
		return nil, fmt.Errorf("process %d has exited", pid)
	}
	return &Proc{Pid: pid, Start: st}, nil
}

// procStat reads a process's start time and state from /proc/<pid>/stat.
func procStat(pid int) (start uint64, state string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	// The command name (field 2) may hold spaces and parentheses: fields resume after
	// the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, "", fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	start, err = strconv.ParseUint(f[19], 10, 64) // field 22 overall
	return start, f[0], err
}

// Alive reports whether the process still runs (a zombie does not count: on hosts whose
// pid 1 does not reap orphans, a dead init lingers as one).
func (p *Proc) Alive() bool {
	st, state, err := procStat(p.Pid)
	return err == nil && st == p.Start && state != "Z" && state != "X"
}

// Signal sends sig to the process if it is still the same process.
func (p *Proc) Signal(sig syscall.Signal) {
	if p.Alive() {
		_ = syscall.Kill(p.Pid, sig)
	}
}

// Terminate sends SIGTERM, waits up to grace for the process to end, then SIGKILLs it
// and waits for it to be gone.
func (p *Proc) Terminate(ctx context.Context, grace time.Duration) error {
	p.Signal(syscall.SIGTERM)
	if p.waitGone(ctx, grace) {
		return nil
	}
	p.Signal(syscall.SIGKILL)
	if p.waitGone(ctx, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", p.Pid)
}

func (p *Proc) waitGone(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.Alive() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
