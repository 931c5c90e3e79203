package review

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// Selection says which changes to land: the named paths (a file, or a directory and all
// beneath it), or All. All takes every change except the flagged ones, which land only
// when named: nothing that would run on the host lands without the user spelling it out.
type Selection struct {
	All   bool
	Paths []string // slash-separated, relative to the workspace root
	// Head, when set, is the work the user reviewed (Changes.Work, or a prefix of at
	// least 7 digits, as a review prints it): land refuses if the sandbox's work has moved
	// on since, so that what lands is what was seen.
	Head string
	// Hunks, when set, lands only these hunks (numbered from 1, as review shows them) of
	// the one file Paths names: Base's content with those hunks applied. Only a text file
	// modified in place has hunks (NotHunkable).
	Hunks []int
	// HunkBase, when set, is the file's Base blob the hunks were numbered against (a
	// review's old_id): the land is refused if a land since has moved it.
	HunkBase string
}

// ErrHeadMoved is a land refused because the work changed since the review it names.
var ErrHeadMoved = errors.New("the sandbox's work changed since that review")

// Refusal is a path land would not write, and why.
type Refusal struct{ Path, Why string }

// RefusedError is a land that wrote nothing because some of its paths changed on the
// host since the sandbox started (or cannot be written safely).
type RefusedError struct{ Refusals []Refusal }

// Error names every refused path and why, on one line.
func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		parts[i] = Quote(r.Path) + ": " + r.Why
	}
	return "nothing landed: " + strings.Join(parts, "; ")
}

// Landed is what a land wrote.
type Landed struct {
	Files []File // the changes written
	Left  int    // changes still unlanded
	Held  []File // flagged changes --all left alone (name them to land them)
	Base  string // the commit recording them (Changes.BaseRef now holds it, when set)
	// HunksLeft is, for a land of hunks, how many of the file's hunks are still unlanded
	// (the file then counts in Left).
	HunksLeft int
}

// Land writes the selected changes into the host tree at c.Root, each file's content
// from Head's blob, written by this process (no checkout, no filters, no hooks) to a
// temporary file beside it and renamed over it. It first checks every path it would
// touch against Base: a host file that changed since the sandbox started (or a path whose
// directory is a symlink on the host) refuses the whole land, and nothing is written.
// Each write is reported on out as it happens. Base then moves forward for the landed
// paths (c.BaseRef, when set), so the next review shows only what is left. With
// sel.Hunks only those hunks of one file land: what is written and recorded is Base's
// content with them applied, so the next review shows the file's other hunks.
func Land(ctx context.Context, g *hostgit.Git, c Changes, sel Selection, out io.Writer) (Landed, error) {
	if h := sel.Head; h != "" {
		var err error
		if c, err = WorkID(ctx, g, c); err != nil {
			return Landed{}, err
		}
		if len(h) < 7 || !strings.HasPrefix(c.Work, strings.ToLower(h)) {
			return Landed{}, fmt.Errorf("%w (reviewed %s, now %s): review it again", ErrHeadMoved, h, ShortID(c.Work))
		}
	}
	files, err := Files(ctx, g, c)
	if err != nil {
		return Landed{}, err
	}
	chosen, held, err := selectFiles(files, sel)
	if err != nil {
		return Landed{}, err
	}
	hunksLeft := 0
	if len(sel.Hunks) > 0 {
		var f File
		if f, hunksLeft, err = landHunks(ctx, g, c, chosen, sel); err != nil {
			return Landed{}, err
		}
		chosen = []File{f}
	}
	root, err := os.OpenRoot(c.Root)
	if err != nil {
		return Landed{}, fmt.Errorf("opening the workspace %s: %w", c.Root, err)
	}
	defer root.Close()
	var refused []Refusal
	for _, f := range chosen {
		refused = append(refused, checkHost(ctx, g, root, f)...)
	}
	if len(refused) > 0 {
		return Landed{}, &RefusedError{refused}
	}
	done, err := write(ctx, g, root, chosen, out)
	landed := Landed{Files: done, Left: len(files) - len(done), Held: held}
	if hunksLeft > 0 && len(done) > 0 {
		landed.Left++ // the file has hunks left
		landed.HunksLeft = hunksLeft
	}
	if len(done) > 0 {
		// What was written is recorded even when a later write failed.
		base, rerr := record(ctx, g, c, done)
		if rerr != nil {
			return landed, errors.Join(err, rerr)
		}
		landed.Base = base
	}
	return landed, err
}

// write applies the chosen changes, deletions first (so that a file that becomes a
// directory, or the other way, has room), then the contents, all from one git command;
// it returns those it applied.
func write(ctx context.Context, g *hostgit.Git, root *os.Root, chosen []File, out io.Writer) ([]File, error) {
	sort.SliceStable(chosen, func(i, j int) bool { return rank(chosen[i]) < rank(chosen[j]) })
	var done, writes []File
	for _, f := range chosen {
		if f.NewMode != "" {
			writes = append(writes, f)
			continue
		}
		err := unchanged(ctx, g, root, f.Path, f.OldMode, f.OldID)
		if err == nil {
			err = remove(root, f.Path)
		}
		if err != nil {
			return done, fmt.Errorf("landing %s: %w", Quote(f.Path), err)
		}
		fmt.Fprintf(out, "deleted %s\n", Quote(f.Path))
		done = append(done, f)
	}
	ids := make([]string, len(writes))
	for i, f := range writes {
		ids[i] = f.NewID
	}
	err := catBlobs(ctx, g, ids, func(i int, size int64, content io.Reader) error {
		if err := apply(ctx, g, root, writes[i], size, content, out); err != nil {
			return fmt.Errorf("landing %s: %w", Quote(writes[i].Path), err)
		}
		done = append(done, writes[i])
		return nil
	})
	return done, err
}

// rank orders the writes: deletions, then renames (their old path goes), then the rest.
func rank(f File) int {
	switch f.Status {
	case Deleted:
		return 0
	case Renamed:
		return 1
	}
	return 2
}

// selectFiles picks sel's files from files; a named path that matches no change is an
// error, before anything is written.
func selectFiles(files []File, sel Selection) (chosen, held []File, err error) {
	named := func(f File, p string) bool {
		for _, fp := range f.paths() {
			if fp == p || strings.HasPrefix(fp, p+"/") {
				return true
			}
		}
		return false
	}
	var unknown []string
	for _, p := range sel.Paths {
		p = strings.TrimSuffix(path.Clean(p), "/")
		hit := false
		for _, f := range files {
			if p == "." || named(f, p) {
				hit = true
			}
		}
		if !hit {
			unknown = append(unknown, Quote(p))
		}
	}
	if len(unknown) > 0 {
		return nil, nil, fmt.Errorf("no change to land at %s (see pi-sbx-backend review)", strings.Join(unknown, ", "))
	}
	for _, f := range files {
		take := false
		for _, p := range sel.Paths {
			p = path.Clean(p)
			// "." is the whole workspace: the flagged files still need their own names.
			if (p == "." && !f.Flagged()) || (p != "." && named(f, p)) {
				take = true
			}
		}
		if sel.All && !take {
			if f.Flagged() {
				held = append(held, f)
			} else {
				take = true
			}
		}
		if take {
			chosen = append(chosen, f)
		}
	}
	return chosen, held, nil
}

// checkHost compares every host path f touches with Base's state of it.
func checkHost(ctx context.Context, g *hostgit.Git, root *os.Root, f File) []Refusal {
	var out []Refusal
	if f.NewMode == ModeGitlink || f.OldMode == ModeGitlink {
		return []Refusal{{f.Path, "a submodule: land it by hand"}}
	}
	type want struct{ p, mode, id string }
	wants := []want{{f.Path, f.OldMode, f.OldID}}
	if f.Status == Renamed {
		wants = []want{{f.OldPath, f.OldMode, f.OldID}, {f.Path, "", ""}}
	}
	for _, w := range wants {
		if why := unsafePath(w.p); why != "" {
			out = append(out, Refusal{w.p, why})
			continue
		}
		if why, err := hostState(ctx, g, root, w.p, w.mode, w.id); err != nil {
			out = append(out, Refusal{w.p, err.Error()})
		} else if why != "" {
			out = append(out, Refusal{w.p, why})
		}
	}
	return out
}

// unsafePath rejects a path no git checkout would write: absolute, with "." or ".."
// parts, empty parts.
func unsafePath(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return "not a path inside the workspace"
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return "not a path inside the workspace"
		}
	}
	return ""
}

// hostState says why the host's p differs from Base's (mode, id; mode "" = absent),
// "" when it does not.
func hostState(ctx context.Context, g *hostgit.Git, root *os.Root, p, mode, id string) (string, error) {
	// A directory on the way that is a symlink would send the write elsewhere.
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if fi, err := root.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "the directory " + Quote(dir) + " is a symlink on the host", nil
		}
	}
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if mode == "" {
			return "", nil
		}
		return "deleted on the host since the sandbox started", nil
	}
	if err != nil {
		return "", err
	}
	if mode == "" {
		return "exists on the host but did not when the sandbox started", nil
	}
	switch mode {
	case ModeSymlink:
		if fi.Mode()&fs.ModeSymlink == 0 {
			return "no longer a symlink on the host", nil
		}
		target, err := root.Readlink(p)
		if err != nil {
			return "", err
		}
		want, err := blob(ctx, g, id, maxLinkTarget)
		if err != nil {
			return "", err
		}
		if target != string(want) {
			return "the symlink changed on the host since the sandbox started", nil
		}
		return "", nil
	case ModeFile, ModeExec:
		if !fi.Mode().IsRegular() {
			return "no longer a regular file on the host", nil
		}
		// Windows keeps no executable bit: git there takes the mode from the index.
		if exec := fi.Mode().Perm()&0o100 != 0; runtime.GOOS != "windows" && exec != (mode == ModeExec) {
			return "its executable bit changed on the host since the sandbox started", nil
		}
		sum, err := hashFile(root, p, len(id))
		if err != nil {
			return "", err
		}
		if sum != id {
			return "changed on the host since the sandbox started", nil
		}
		return "", nil
	}
	return "an entry of mode " + mode + " cannot be compared", nil
}

// hashFile is git's blob id of the host file p (SHA-1, or SHA-256 for 64-digit ids).
func hashFile(root *os.Root, p string, idLen int) (string, error) {
	f, err := root.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := newHash(idLen)
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return "", err
	}
	if n != fi.Size() {
		return "", fmt.Errorf("%s changed size while it was read", p)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func newHash(idLen int) hash.Hash {
	if idLen == 64 {
		return sha256.New()
	}
	return sha1.New()
}

// apply writes one change into the host tree from its content (size bytes of the blob
// Head has at its path) and reports it on out. Each path is checked against Base again
// at the last moment (just before its rename), so a host edit made during the land is
// not overwritten either.
func apply(ctx context.Context, g *hostgit.Git, root *os.Root, f File, size int64, content io.Reader, out io.Writer) error {
	baseMode, baseID := f.OldMode, f.OldID
	if f.Status == Renamed {
		if err := unchanged(ctx, g, root, f.OldPath, f.OldMode, f.OldID); err != nil {
			return err
		}
		if err := remove(root, f.OldPath); err != nil {
			return err
		}
		fmt.Fprintf(out, "deleted %s (renamed)\n", Quote(f.OldPath))
		baseMode, baseID = "", "" // Base had nothing at the new path
	}
	verify := func() error { return unchanged(ctx, g, root, f.Path, baseMode, baseID) }
	switch f.NewMode {
	case ModeSymlink:
		if size > 4096 {
			return fmt.Errorf("a symlink target of %d bytes", size)
		}
		target, err := io.ReadAll(content)
		if err != nil {
			return err
		}
		if err := replace(root, f.Path, func(tmp string) error { return root.Symlink(string(target), tmp) }, verify); err != nil {
			return err
		}
		fmt.Fprintf(out, "linked %s -> %s\n", Quote(f.Path), Quote(string(target)))
	case ModeFile, ModeExec:
		if err := writeBlob(root, f, size, content, verify); err != nil {
			return err
		}
		note := ""
		if f.NewMode == ModeExec {
			note = ", executable"
		}
		fmt.Fprintf(out, "wrote %s (%d bytes%s)\n", Quote(f.Path), size, note)
	default:
		return fmt.Errorf("mode %s cannot be landed", f.NewMode)
	}
	return nil
}

// writeBlob writes f's Head content to a temporary file beside it, hashing it on the
// way: one whose id is not the blob's is never renamed over the path. It is not synced
// (git's checkout does not either; fsync was two thirds of a 300-file land): both what
// was there and what lands stay in the object store, as Base and Head.
func writeBlob(root *os.Root, f File, size int64, content io.Reader, verify func() error) error {
	perm := fs.FileMode(0o644)
	if fi, err := root.Lstat(f.Path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm() &^ 0o111
	}
	if f.NewMode == ModeExec {
		perm |= (perm & 0o444) >> 2
	}
	return replace(root, f.Path, func(tmp string) error {
		w, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		h := newHash(len(f.NewID))
		fmt.Fprintf(h, "blob %d\x00", size)
		n, werr := io.Copy(io.MultiWriter(w, h), content)
		if werr == nil && n != size {
			werr = fmt.Errorf("%d of %d bytes", n, size)
		}
		if cerr := w.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != f.NewID {
			return fmt.Errorf("the object store gave content %s for blob %s", got, f.NewID)
		}
		return root.Chmod(tmp, perm) // the umask may have cut it
	}, verify)
}

// catBlobs streams the blobs ids from one `git cat-file --batch` and hands each to each,
// in order, as size bytes of content; an error from each stops git.
func catBlobs(ctx context.Context, g *hostgit.Git, ids []string, each func(i int, size int64, content io.Reader) error) error {
	if len(ids) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, id := range ids {
		in.WriteString(id + "\n")
	}
	// The contents go to files as they come, not to memory: no cap but the store's.
	stream := *g
	stream.MaxOutput = math.MaxInt64
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := stream.Stream(ctx, &in, pw, nil, "cat-file", "--batch")
		pw.CloseWithError(err)
		done <- err
	}()
	err := readBatch(bufio.NewReader(pr), ids, each)
	pr.CloseWithError(errors.New("stopped reading"))
	if gitErr := <-done; err == nil && gitErr != nil {
		err = fmt.Errorf("reading the sandbox's files: %w", gitErr)
	}
	return err
}

// readBatch reads cat-file --batch's answers: "ID blob SIZE\n", the content, "\n".
func readBatch(br *bufio.Reader, ids []string, each func(i int, size int64, content io.Reader) error) error {
	for i, id := range ids {
		head, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading blob %s: %w", id, err)
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != id || f[1] != "blob" {
			return fmt.Errorf("reading blob %s: git answered %q", id, strings.TrimSpace(head))
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("reading blob %s: size %q", id, f[2])
		}
		content := io.LimitReader(br, size)
		if err := each(i, size, content); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, content); err != nil {
			return err
		}
		if b, err := br.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("reading blob %s: no newline after it", id)
		}
	}
	return nil
}

// replace makes a new entry at a temporary name beside p with make and renames it over p
// once verify passes, so a reader sees the old entry or the new one, never half of one.
func replace(root *os.Root, p string, make func(tmp string) error, verify func() error) error {
	dir := path.Dir(p)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(p)+".pi-sbx-land-"+hex.EncodeToString(rnd[:]))
	err := make(tmp)
	if err == nil {
		err = verify()
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// unchanged is hostState as an error: p on the host is as Base has it (mode "": absent).
func unchanged(ctx context.Context, g *hostgit.Git, root *os.Root, p, mode, id string) error {
	why, err := hostState(ctx, g, root, p, mode, id)
	if err == nil && why != "" {
		err = errors.New(why)
	}
	return err
}

// remove deletes p and then the directories it leaves empty.
func remove(root *os.Root, p string) error {
	if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if root.Remove(dir) != nil {
			break // not empty: it holds other files
		}
	}
	return nil
}
