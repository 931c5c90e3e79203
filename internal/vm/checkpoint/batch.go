package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Batch keeps git's batch processes for one journal open between checkpoints, so that
// a checkpoint of the files a call names (a write's, an edit's) costs a few round trips
// to them — hash the files, rebuild the trees above them from the last checkpoint's,
// write the commit, set the ref — instead of four git runs that each read the whole
// index and look at every file. Anything it does not handle exactly as `git add -A`
// would (a symbolic link, a directory, a nested repository, case-folding or
// executable-bit-blind settings) sends the checkpoint to the full one.
//
// A Batch is used by one checkpoint at a time; its zero value is ready. Close ends its
// processes; a process that fails is closed with the rest and started again when
// needed.
type Batch struct {
	key                             string // the journal the processes serve
	cat, blobs, commits, trees, ign *coproc
	refs                            *coproc
	plain                           bool                   // the repository's settings allow this path (read once)
	cache                           map[string][]treeEntry // trees read, by id: an id names its content
	// rules are the .gitignore and .gitattributes files (and the repository's info/
	// ones) the running processes may have read, as they were: git reads each once, so a
	// changed one means starting them again.
	rules map[string]fileStamp
}

// fileStamp is what tells a file changed.
type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool // it exists
}

// errFull sends a checkpoint to the full one: not an error of anything.
var errFull = errors.New("checkpoint: needs the full checkpoint")

// treeEntry is one entry of a git tree object.
type treeEntry struct {
	mode, name, id string // mode as git writes it in trees: 100644, 100755, 120000, 40000, 160000
}

// Close ends the batch's git processes.
func (b *Batch) Close() {
	closeAll(&b.cat, &b.blobs, &b.commits, &b.trees, &b.ign, &b.refs)
	b.key, b.cache, b.rules = "", nil, nil
}

// PIDs are the batch's running git processes: the agent's own, never a holder of the
// workspace to warn of.
func (b *Batch) PIDs() []int {
	var pids []int
	for _, c := range []*coproc{b.cat, b.blobs, b.commits, b.trees, b.ign, b.refs} {
		if c != nil {
			pids = append(pids, c.cmd.Process.Pid)
		}
	}
	return pids
}

// freshRules ends the processes that read ignore and attribute rules when one of the
// files they may have read for rels changed since.
func (b *Batch) freshRules(j Journal, rels []string) {
	files := []string{filepath.Join(j.GitDir, "info", "exclude"), filepath.Join(j.GitDir, "info", "attributes")}
	for _, rel := range rels {
		for dir := path.Dir(rel); ; dir = path.Dir(dir) {
			d := filepath.Join(j.Root, filepath.FromSlash(dir))
			files = append(files, filepath.Join(d, ".gitignore"), filepath.Join(d, ".gitattributes"))
			if dir == "." {
				break
			}
		}
	}
	if b.rules == nil {
		b.rules = map[string]fileStamp{}
	}
	stale := false
	for _, f := range files {
		var now fileStamp
		if fi, err := os.Lstat(f); err == nil {
			now = fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
		}
		if was, seen := b.rules[f]; seen && was != now {
			stale = true
		}
		b.rules[f] = now
	}
	if stale {
		b.dropRules()
	}
}

// dropRules ends the processes that read ignore and attribute rules: they are started
// again, and read them afresh, when next needed.
func (b *Batch) dropRules() { closeAll(&b.blobs, &b.ign) }

// closeAll ends the processes cs hold.
func closeAll(cs ...**coproc) {
	for _, c := range cs {
		if *c != nil {
			(*c).close()
			*c = nil
		}
	}
}

// take checkpoints only's files (absolute, in j.Root) over parentTree.
func (b *Batch) take(ctx context.Context, j Journal, parent, parentTree, ref, msg string, only []string) (Checkpoint, error) {
	if key := j.GitDir + "\x00" + j.Root; b.key != key {
		b.Close()
		b.key = key
		plain, err := plainSettings(ctx, j)
		if err != nil {
			return Checkpoint{}, err
		}
		b.plain = plain
	}
	if !b.plain {
		return Checkpoint{}, errFull
	}
	changes := map[string]*treeEntry{} // relative path -> new entry; nil: gone
	var blobs []string
	for _, p := range only {
		rel, ok := relative(j.Root, p)
		if !ok {
			return Checkpoint{}, errFull
		}
		e, err := leaf(j.Root, rel)
		if err != nil {
			return Checkpoint{}, err
		}
		changes[rel] = e
		if e != nil {
			blobs = append(blobs, rel)
		}
	}
	rels := make([]string, 0, len(changes))
	for rel := range changes {
		rels = append(rels, rel)
	}
	b.freshRules(j, rels)
	// New files a .gitignore excludes are not taken, as `git add -A` takes none; a
	// removed file the last checkpoint lacks changes nothing.
	var fresh []string
	for rel, e := range changes {
		old, err := b.lookup(ctx, j, parentTree, rel)
		if err != nil {
			return Checkpoint{}, err
		}
		switch {
		case old != nil && (old.mode == "40000" || old.mode == "160000" || old.mode == "120000"):
			return Checkpoint{}, errFull // a directory, a submodule or a link becomes a file
		case old == nil && e == nil:
			delete(changes, rel)
		case old == nil:
			fresh = append(fresh, rel)
		}
	}
	if len(fresh) > 0 {
		ignored, err := b.ignored(ctx, j, fresh)
		if err != nil {
			return Checkpoint{}, err
		}
		for _, rel := range ignored {
			delete(changes, rel)
		}
	}
	sort.Strings(blobs)
	var hashed []string
	for _, rel := range blobs {
		if changes[rel] != nil {
			hashed = append(hashed, rel)
		}
	}
	ids, err := b.hashBlobs(ctx, j, hashed)
	if err != nil {
		return Checkpoint{}, err
	}
	for i, rel := range hashed {
		changes[rel].id = ids[i]
	}
	tree, err := b.apply(ctx, j, parentTree, changes)
	if err != nil {
		return Checkpoint{}, err
	}
	if tree == "" {
		if tree, err = b.writeTree(ctx, j, nil); err != nil {
			return Checkpoint{}, err
		}
	}
	if tree == parentTree {
		return Checkpoint{Commit: parent, Tree: tree}, nil
	}
	commit, err := b.writeCommit(ctx, j, tree, parent, msg)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := b.setRef(ctx, j, ref, commit); err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{Commit: commit, Tree: tree, Changed: true}, nil
}

// plainSettings reports whether the repository's settings let a file's checkpoint be
// taken without git's index: executable bits trusted, names case-sensitive, no sparse
// checkout.
func plainSettings(ctx context.Context, j Journal) (bool, error) {
	out, err := j.git(ctx, nil, "config", "--get-regexp", `^core\.(filemode|ignorecase|sparsecheckout)$`)
	if err != nil && !strings.Contains(err.Error(), "exit status 1") { // 1: none set
		return false, err
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "core.filemode":
			if v == "false" {
				return false, nil
			}
		case "core.ignorecase", "core.sparsecheckout":
			if v == "true" {
				return false, nil
			}
		}
	}
	return true, nil
}

// relative is p's path in root, slash-separated, when it is plainly a file's under it:
// not root itself, no .git component, no byte git's batch input cannot carry.
func relative(root, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	rel, err := filepath.Rel(root, filepath.Clean(p))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.ContainsAny(rel, "\n\x00\\") {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	for _, c := range strings.Split(rel, "/") {
		if strings.EqualFold(c, ".git") {
			return "", false
		}
	}
	return rel, true
}

// leaf is what rel is in the work tree: a regular file's entry (its id still to be
// hashed), or nil when it is gone. Anything but a regular file under real directories
// outside any nested repository goes to the full checkpoint.
func leaf(root, rel string) (*treeEntry, error) {
	dir := root
	parts := strings.Split(rel, "/")
	for _, c := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, c)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		if err != nil || !fi.IsDir() {
			return nil, errFull // a link or a file on the way: git's rules, not ours
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return nil, errFull // a nested repository: git adds it as a submodule
		}
	}
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil || !fi.Mode().IsRegular() {
		return nil, errFull
	}
	mode := "100644"
	if fi.Mode()&0o100 != 0 { // git looks at the owner's executable bit alone
		mode = "100755"
	}
	return &treeEntry{mode: mode, name: path.Base(rel)}, nil
}

// lookup is rel's entry in tree id, nil when it has none. A file or submodule where
// rel needs a directory sends the checkpoint to the full one.
func (b *Batch) lookup(ctx context.Context, j Journal, id, rel string) (*treeEntry, error) {
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		ents, err := b.readTree(ctx, j, id)
		if err != nil {
			return nil, err
		}
		var found *treeEntry
		for k := range ents { // git's order ("a.txt" before a directory "a") is not the names'
			if ents[k].name == name {
				found = &ents[k]
				break
			}
		}
		if found == nil {
			return nil, nil
		}
		if i == len(parts)-1 {
			return found, nil
		}
		if found.mode != "40000" {
			return nil, errFull
		}
		id = found.id
	}
	return nil, nil
}

// apply is tree id (none when "") with changes (paths below it -> entry; nil: removed)
// made, written; "" when it is left empty (a directory git does not keep).
func (b *Batch) apply(ctx context.Context, j Journal, id string, changes map[string]*treeEntry) (string, error) {
	byName := map[string]treeEntry{}
	if id != "" {
		ents, err := b.readTree(ctx, j, id)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			byName[e.name] = e
		}
	}
	below := map[string]map[string]*treeEntry{}
	for p, e := range changes {
		name, rest, deep := strings.Cut(p, "/")
		if !deep {
			if e == nil {
				delete(byName, name)
			} else {
				byName[name] = treeEntry{mode: e.mode, name: name, id: e.id}
			}
			continue
		}
		if below[name] == nil {
			below[name] = map[string]*treeEntry{}
		}
		below[name][rest] = e
	}
	for name, ch := range below {
		if _, ok := changes[name]; ok {
			return "", errFull // a file and a directory of the same name at once
		}
		var sub string
		if old, ok := byName[name]; ok {
			if old.mode != "40000" {
				return "", errFull
			}
			sub = old.id
		}
		nid, err := b.apply(ctx, j, sub, ch)
		if err != nil {
			return "", err
		}
		if nid == "" {
			delete(byName, name)
		} else {
			byName[name] = treeEntry{mode: "40000", name: name, id: nid}
		}
	}
	if len(byName) == 0 {
		return "", nil
	}
	ents := make([]treeEntry, 0, len(byName))
	for _, e := range byName {
		ents = append(ents, e)
	}
	return b.writeTree(ctx, j, ents)
}

// readTree is tree id's entries, in git's order.
func (b *Batch) readTree(ctx context.Context, j Journal, id string) ([]treeEntry, error) {
	if ents, ok := b.cache[id]; ok {
		return ents, nil
	}
	c, err := b.proc(ctx, j, &b.cat, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	var body []byte
	err = c.roundTrip(ctx, []byte(id+"\n"), func(r *bufio.Reader) error {
		head, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != id || f[1] != "tree" {
			return fmt.Errorf("cat-file: %q for tree %s", strings.TrimSpace(head), id)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > 64<<20 {
			return fmt.Errorf("cat-file: size %q", f[2])
		}
		body = make([]byte, n+1) // the content and its newline
		_, err = io.ReadFull(r, body)
		return err
	})
	if err != nil {
		return nil, err
	}
	ents, err := parseTree(body[:len(body)-1], len(id)/2)
	if err != nil {
		return nil, err
	}
	b.remember(id, ents)
	return ents, nil
}

// parseTree reads a tree object's content: "MODE NAME\0" and the raw id, per entry.
func parseTree(body []byte, idLen int) ([]treeEntry, error) {
	var ents []treeEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+1+idLen {
			return nil, errors.New("checkpoint: a malformed tree object")
		}
		ents = append(ents, treeEntry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), id: fmt.Sprintf("%x", body[nul+1:nul+1+idLen])})
		body = body[nul+1+idLen:]
	}
	return ents, nil
}

// writeTree writes a tree of ents (git sorts them) and returns its id.
func (b *Batch) writeTree(ctx context.Context, j Journal, ents []treeEntry) (string, error) {
	// --missing: no look-up of every entry's object (each one a file or pack search); the
	// entries are the last checkpoint's and blobs just written.
	c, err := b.proc(ctx, j, &b.trees, "mktree", "-z", "--missing", "--batch")
	if err != nil {
		return "", err
	}
	var in bytes.Buffer
	for _, e := range ents {
		kind := "blob"
		switch e.mode {
		case "40000":
			kind = "tree"
		case "160000":
			kind = "commit"
		}
		fmt.Fprintf(&in, "%s %s %s\t%s\x00", e.mode, kind, e.id, e.name)
	}
	in.WriteByte(0)
	id, err := c.line(ctx, in.Bytes())
	if err == nil { // the next checkpoint starts from it: no need to read it back
		sort.Slice(ents, func(a, z int) bool { return treeKey(ents[a]) < treeKey(ents[z]) })
		b.remember(id, ents)
	}
	return id, err
}

// treeKey is what git sorts a tree's entries by: a directory's name as if it ended in "/".
func treeKey(e treeEntry) string {
	if e.mode == "40000" {
		return e.name + "/"
	}
	return e.name
}

// remember caches a tree's entries, bounded.
func (b *Batch) remember(id string, ents []treeEntry) {
	if b.cache == nil || len(b.cache) > 4096 {
		b.cache = map[string][]treeEntry{}
	}
	b.cache[id] = ents
}

// pipelined is how many requests go to a batch process before its answers are read:
// their answers fit in a pipe's buffer, so git never waits on a full pipe while this
// process is still writing.
const pipelined = 128

// hashBlobs writes rels' contents as git add would (the work tree's filters applied)
// and returns their ids.
func (b *Batch) hashBlobs(ctx context.Context, j Journal, rels []string) ([]string, error) {
	if len(rels) == 0 {
		return nil, nil
	}
	c, err := b.proc(ctx, j, &b.blobs, "hash-object", "-w", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(rels))
	for len(rels) > 0 {
		n := min(len(rels), pipelined)
		err := c.roundTrip(ctx, []byte(strings.Join(rels[:n], "\n")+"\n"), func(r *bufio.Reader) error {
			for range n {
				id, err := readID(r)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		rels = rels[n:]
	}
	return ids, nil
}

// writeCommit writes the checkpoint's commit: tree on parent (none when ""), with msg.
func (b *Batch) writeCommit(ctx context.Context, j Journal, tree, parent, msg string) (string, error) {
	c, err := b.proc(ctx, j, &b.commits, "hash-object", "-w", "-t", "commit", "--stdin-paths")
	if err != nil {
		return "", err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&text, "parent %s\n", parent)
	}
	sig := fmt.Sprintf("pi-sbx <pi-sbx@sandbox> %d +0000", time.Now().Unix())
	fmt.Fprintf(&text, "author %s\ncommitter %s\n\n%s\n", sig, sig, strings.TrimRight(msg, "\n"))
	f, err := os.CreateTemp(filepath.Dir(j.Index), "commit-*")
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(text.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return c.line(ctx, []byte(f.Name()+"\n"))
}

// setRef points ref at commit.
func (b *Batch) setRef(ctx context.Context, j Journal, ref, commit string) error {
	c, err := b.proc(ctx, j, &b.refs, "update-ref", "--stdin")
	if err != nil {
		return err
	}
	return c.roundTrip(ctx, []byte("start\nupdate "+ref+" "+commit+"\ncommit\n"), func(r *bufio.Reader) error {
		for _, want := range []string{"start: ok\n", "commit: ok\n"} {
			got, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("update-ref: %q", strings.TrimSpace(got))
			}
		}
		return nil
	})
}

// ignored is those of rels a .gitignore (or info/exclude, core.excludesFile) excludes.
func (b *Batch) ignored(ctx context.Context, j Journal, rels []string) ([]string, error) {
	c, err := b.proc(ctx, j, &b.ign, "check-ignore", "--stdin", "-z", "--verbose", "--non-matching", "--no-index")
	if err != nil {
		return nil, err
	}
	var out []string
	for len(rels) > 0 {
		chunk := rels[:min(len(rels), pipelined)]
		rels = rels[len(chunk):]
		err := c.roundTrip(ctx, []byte(strings.Join(chunk, "\x00")+"\x00"), func(r *bufio.Reader) error {
			for _, rel := range chunk {
				var f [4]string // source, line, pattern, path
				for i := range f {
					s, err := r.ReadString(0)
					if err != nil {
						return err
					}
					f[i] = strings.TrimSuffix(s, "\x00")
				}
				if f[3] != rel {
					return fmt.Errorf("answered for %q, asked %q", f[3], rel)
				}
				if f[2] != "" && !strings.HasPrefix(f[2], "!") { // "!": a negated pattern re-includes it
					out = append(out, rel)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// proc is *c, started with git args when not running.
func (b *Batch) proc(ctx context.Context, j Journal, c **coproc, args ...string) (*coproc, error) {
	if *c != nil {
		return *c, nil
	}
	p, err := startCoproc(j, args...)
	if err != nil {
		return nil, err
	}
	*c = p
	return p, nil
}

// coproc is a git process that answers requests on its stdin, one at a time.
type coproc struct {
	cmd  *exec.Cmd
	in   *os.File
	outf *os.File
	out  *bufio.Reader
}

func startCoproc(j Journal, args ...string) (*coproc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	cmd := exec.Command("git", append(append([]string(nil), gitJournalConfig...), args...)...)
	cmd.Dir = j.Root
	cmd.Env = append(j.env(), "GIT_FLUSH=1") // an answer written at once, not when a buffer fills
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("checkpoint: git %s: %w", args[0], err)
	}
	return &coproc{cmd: cmd, in: inW, outf: outR, out: bufio.NewReader(outR)}, nil
}

// roundTrip writes req and reads its answer with read, within ctx's deadline.
func (c *coproc) roundTrip(ctx context.Context, req []byte, read func(*bufio.Reader) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(Timeout)
	}
	_ = c.in.SetWriteDeadline(dl)
	_ = c.outf.SetReadDeadline(dl)
	if _, err := c.in.Write(req); err != nil {
		return fmt.Errorf("checkpoint: git %s: %w", c.cmd.Args[len(gitJournalConfig)+1], err)
	}
	if err := read(c.out); err != nil {
		return fmt.Errorf("checkpoint: git %s: %w", c.cmd.Args[len(gitJournalConfig)+1], err)
	}
	return nil
}

// line sends req and reads a one-line answer: an object id.
func (c *coproc) line(ctx context.Context, req []byte) (string, error) {
	var id string
	err := c.roundTrip(ctx, req, func(r *bufio.Reader) (err error) {
		id, err = readID(r)
		return err
	})
	return id, err
}

// readID reads a line that is an object id.
func readID(r *bufio.Reader) (string, error) {
	s, err := r.ReadString('\n')
	id := strings.TrimSpace(s)
	if err == nil && !isHexID(id) {
		err = fmt.Errorf("answered %q", id)
	}
	return id, err
}

func (c *coproc) close() {
	c.in.Close() // git's batch modes end at the end of their input
	c.outf.Close()
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

func isHexID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdef") == ""
}
