// Package journal is review mode's per-call journal: after every call that can change
// the sandbox's workspace, a checkpoint of it is taken in the VM (a commit on a private
// ref, refs/pi-sbx/journal/N, made with a private index, so the agent's own index, HEAD
// and branches are untouched) and recorded on the host beside the review store: which
// client, its id for the call, the tool and its arguments' short form (the audit log's),
// the time. A call that changed nothing records nothing. Collecting the work brings the
// checkpoints' commits home with it (keep), so the journal outlives the sandbox; undo
// writes an earlier checkpoint's files back and is itself a checkpoint.
package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/filelock"
)

// Entry is one checkpoint. Entry 0 is the workspace before the first recorded call.
type Entry struct {
	N      int               `json:"n"`
	Time   time.Time         `json:"time"`
	Client string            `json:"client,omitempty"`
	CallID string            `json:"call_id,omitempty"`
	Tool   string            `json:"tool"`
	Args   map[string]string `json:"args,omitempty"`
	Commit string            `json:"commit"`
	Tree   string            `json:"tree"`
	Parent string            `json:"parent,omitempty"` // the previous checkpoint's commit
}

// Ref is checkpoint n's ref in the sandbox's repository.
func Ref(n int) string { return "refs/pi-sbx/journal/" + strconv.Itoa(n) }

// StartTool names entry 0's "tool".
const StartTool = "(start)"

// Journal is one sandbox's journal file, NAME.journal.jsonl in the review store.
type Journal struct{ Path string }

// Open returns the journal of sandbox name in the review store's directory.
func Open(storeDir, name string) Journal {
	return Journal{Path: filepath.Join(storeDir, name+".journal.jsonl")}
}

// Entries reads the journal, oldest first; a missing file is an empty journal. A line
// that does not decode (cut by a crash) is skipped.
func (j Journal) Entries() ([]Entry, error) {
	b, err := os.ReadFile(j.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the journal: %w", err)
	}
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Commit != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// Append writes e as one line (the lock held).
func (j Journal) Append(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(j.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	return nil
}

// Lock serializes checkpoints of one sandbox across processes (pi's serve and an
// editor's, an undo in a terminal).
func (j Journal) Lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(j.Path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	unlock, err = filelock.Lock(ctx, j.Path+".lock")
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return unlock, nil
}

// Remove deletes the journal (discard, or a new sandbox of the same name).
func (j Journal) Remove() error {
	for _, p := range []string{j.Path, j.Path + ".lock"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Home is where the journal's private files live in the VM, outside the workspace.
const Home = "/home/agent/.pi-sbx-journal"

// VM is where sandbox's checkpoints are made in the VM: in a clone, the clone's own
// repository; in any other workspace, a private repository outside it.
type VM struct {
	Root, GitDir, Index string
}

// VMFor returns the VM side of sandbox's journal for a workspace root (clone: a git
// workspace cloned by sbx).
func VMFor(sandbox, root string, clone bool) VM {
	v := VM{Root: root, GitDir: path.Join(Home, sandbox+".git"), Index: path.Join(Home, sandbox+".index")}
	if clone {
		v.GitDir = path.Join(root, ".git")
	}
	return v
}

// Line is entry e as one line of `review --calls`: its number, client, call id, tool,
// arguments' short form, then what it changed (files, lines added and removed).
func Line(e Entry, files, added, removed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4d %-16s %-18s %-16s", e.N, orDash(e.Client), orDash(e.CallID), e.Tool)
	keys := make([]string, 0, len(e.Args))
	for k := range e.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, oneLine(e.Args[k]))
	}
	fmt.Fprintf(&b, "  %d file(s) +%d -%d", files, added, removed)
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	if first, _, more := strings.Cut(s, "\n"); more {
		return first + " …"
	}
	return s
}

// Span is the checkpoints a spec names: "N" (call N alone) or "A..B" (calls A to B,
// their net change), among entries. From is the checkpoint before the first call, To
// the last call's.
func Span(entries []Entry, spec string) (from, to Entry, err error) {
	a, b, isRange := strings.Cut(spec, "..")
	if !isRange {
		b = a
	}
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	if errA != nil || errB != nil || na < 1 || nb < na {
		return Entry{}, Entry{}, fmt.Errorf("%q: want a call N or a span A..B of the journal's calls (1 ≤ A ≤ B)", spec)
	}
	byN := map[int]Entry{}
	for _, e := range entries {
		byN[e.N] = e
	}
	first, ok1 := byN[na]
	last, ok2 := byN[nb]
	if !ok1 || !ok2 {
		return Entry{}, Entry{}, fmt.Errorf("%q: the journal has calls 1 to %d", spec, len(entries)-1)
	}
	from, ok := byN[na-1]
	if !ok || from.Commit != first.Parent {
		return Entry{}, Entry{}, fmt.Errorf("%q: checkpoint %d is missing from the journal", spec, na-1)
	}
	return from, last, nil
}

// IsSpec reports whether arg reads as a call or a span of calls rather than a path.
func IsSpec(arg string) bool {
	a, b, isRange := strings.Cut(arg, "..")
	if _, err := strconv.Atoi(a); err != nil {
		return false
	}
	if isRange {
		_, err := strconv.Atoi(b)
		return err == nil
	}
	return true
}
