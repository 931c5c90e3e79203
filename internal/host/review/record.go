package review

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// record makes the commit that says what was landed: Base's tree with the landed paths
// at Head's state, Base its parent; and moves c.BaseRef to it (compare and swap: a land
// that finds the ref moved by another records on top of that one's, so neither record is
// lost). Four git commands, however many files and directories: Base's listing, the new
// trees (their ids computed here, checked against git's), the commit, the ref.
func record(ctx context.Context, g *hostgit.Git, c Changes, landed []File) (string, error) {
	edits := map[string]*entry{} // path -> Head's entry, nil for gone
	for _, f := range landed {
		if f.Status == Renamed {
			edits[f.OldPath] = nil
		}
		if f.NewMode == "" {
			edits[f.Path] = nil
		} else {
			edits[f.Path] = &entry{mode: f.NewMode, id: f.NewID}
		}
	}
	msg := "pi-sbx: landed " + strconv.Itoa(len(landed)) + " change(s) from " + c.Sandbox
	base := c.Base
	if c.RecordBase != "" {
		base = c.RecordBase
	}
	// Another land may have moved the ref meanwhile: record on top of its record then
	// (the host has what both wrote), a few times at most.
	for try := 0; ; try++ {
		tree, err := writeTrees(ctx, g, base, edits)
		if err != nil {
			return "", fmt.Errorf("recording the land: %w", err)
		}
		id, err := g.Run(ctx, nil, hostgit.Identity(), "commit-tree", tree, "-p", base, "-m", msg)
		if err != nil {
			return "", fmt.Errorf("recording the land: %w", err)
		}
		commit := strings.TrimSpace(string(id))
		if c.BaseRef == "" {
			return commit, nil
		}
		_, err = g.Run(ctx, nil, nil, "update-ref", "-m", msg, c.BaseRef, commit, base)
		if err == nil {
			return commit, nil
		}
		now, rerr := g.Run(ctx, nil, nil, "rev-parse", "--verify", c.BaseRef)
		if moved := strings.TrimSpace(string(now)); rerr == nil && moved != base && try < 4 {
			base = moved
			continue
		}
		return "", fmt.Errorf("recording the land in %s: %w", c.BaseRef, err)
	}
}

// entry is one tree entry: git's mode (as ls-tree prints it) and object id.
type entry struct{ mode, id string }

const modeTree = "040000"

// writeTrees returns the id of base's tree with edits applied (paths from the root),
// writing the directories on the edited paths again: their contents are encoded here and
// stored by one `git hash-object -t tree -w --stdin-paths`, which checks each.
func writeTrees(ctx context.Context, g *hostgit.Git, base string, edits map[string]*entry) (string, error) {
	listing, err := g.Run(ctx, nil, nil, "ls-tree", "-r", "-t", "-z", "--full-tree", base)
	if err != nil {
		return "", err
	}
	dirs := map[string]map[string]entry{".": {}}
	dir := func(d string) map[string]entry {
		if dirs[d] == nil {
			dirs[d] = map[string]entry{}
		}
		return dirs[d]
	}
	for _, rec := range bytes.Split(listing, []byte{0}) {
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		dir(path.Dir(p))[path.Base(p)] = entry{mode: f[0], id: f[2]}
	}
	touched := map[string]bool{".": true}
	for p, e := range edits {
		for a := path.Dir(p); a != "."; a = path.Dir(a) {
			touched[a] = true
		}
		if e == nil {
			delete(dir(path.Dir(p)), path.Base(p))
		} else {
			dir(path.Dir(p))[path.Base(p)] = *e
		}
	}
	order := make([]string, 0, len(touched))
	for d := range touched {
		order = append(order, d)
	}
	depth := func(d string) int {
		if d == "." {
			return -1
		}
		return strings.Count(d, "/")
	}
	sort.Slice(order, func(i, j int) bool { return depth(order[i]) > depth(order[j]) }) // children first
	tmp, err := os.MkdirTemp("", "pi-sbx-trees-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	var files, want []string
	idLen := len(base)
	for _, d := range order {
		ents := dir(d)
		if len(ents) == 0 && d != "." {
			delete(dir(path.Dir(d)), path.Base(d)) // git has no empty directories
			continue
		}
		content, err := encodeTree(ents)
		if err != nil {
			return "", err
		}
		h := newHash(idLen)
		fmt.Fprintf(h, "tree %d\x00", len(content))
		h.Write(content)
		id := hex.EncodeToString(h.Sum(nil))
		file := filepath.Join(tmp, strconv.Itoa(len(files)))
		if err := os.WriteFile(file, content, 0o600); err != nil {
			return "", err
		}
		files, want = append(files, file), append(want, id)
		if d != "." {
			dir(path.Dir(d))[path.Base(d)] = entry{mode: modeTree, id: id}
		}
	}
	out, err := g.Run(ctx, strings.NewReader(strings.Join(files, "\n")+"\n"), nil, "hash-object", "-t", "tree", "-w", "--stdin-paths")
	if err != nil {
		return "", err
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != strings.Join(want, " ") {
		return "", fmt.Errorf("git stored the trees as %v, not %v", got, want)
	}
	return want[len(want)-1], nil // the root comes last
}

// encodeTree is a tree object's content: "MODE NAME\0RAWID" per entry, in git's order
// (a directory sorts as if its name ended in '/'), modes without a leading zero.
func encodeTree(ents map[string]entry) ([]byte, error) {
	names := make([]string, 0, len(ents))
	for n := range ents {
		names = append(names, n)
	}
	key := func(n string) string {
		if ents[n].mode == modeTree {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	var b bytes.Buffer
	for _, n := range names {
		e := ents[n]
		raw, err := hex.DecodeString(e.id)
		if err != nil {
			return nil, fmt.Errorf("entry %q: id %q", n, e.id)
		}
		b.WriteString(strings.TrimPrefix(e.mode, "0"))
		b.WriteByte(' ')
		b.WriteString(n)
		b.WriteByte(0)
		b.Write(raw)
	}
	return b.Bytes(), nil
}
