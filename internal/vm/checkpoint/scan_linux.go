package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Scan finds the files of a work tree changed since it was last asked by comparing each
// file's stat with the one the last scan saw, as git's index does: where a Watch cannot
// be had (inotify has no watch left). Unlike a Watch it also sees changes that send no
// event, such as the host's under an overlay. It reads directories and stats their
// files, and hashes nothing; a directory a rule excludes and the last checkpoint has
// nothing of is not walked (git's walk skips it too). Its zero value is not ready: use
// NewScan.
type Scan struct {
	root    string
	dirs    map[string]*scanDir // by path relative to root, "." the root
	gen     uint64              // the current scan
	rules   stamp               // the repository's info/exclude
	ignores map[string]string   // the .gitignore files' contents, by path
	window  time.Duration       // racyWindow, but in tests
	ready   bool                // a scan was made: there is something to compare with
	lost    bool                // the next scan says all
	dead    bool                // the tree is too big to scan: always all
}

// scanDir is one directory as the last scan saw it.
type scanDir struct {
	files map[string]stamp // by name: anything but a directory
	gen   uint64           // the scan that last walked it
	skip  verdict
}

type verdict int8

const (
	unknown verdict = iota // not asked yet, or the rules changed since
	walk
	skip // a rule excludes it and the last checkpoint has nothing of it
)

// stamp is what tells a file changed: git's stat data, its name's kind and whether its
// times were too close to its scan to tell a later change apart (racy, in git's words).
type stamp struct {
	mode         uint32
	ino, size    int64
	mtime, ctime int64
	racy         bool
	ok           bool
}

// maxScan is how many entries a scan reads before it gives up on the tree for good: a
// tree that large costs git's walk no more than this one.
const maxScan = 200_000

// racyWindow is how close to its scan a file's times must be for the scan to look at it
// again next time: a file written in the same clock tick after it was stated has the
// same times (and a host's clock may be a little off the VM's).
const racyWindow = 2 * time.Second

// NewScan returns a scan of root. Its first answer is all of the tree: it has nothing
// to compare with.
func NewScan(root string) *Scan {
	return &Scan{root: filepath.Clean(root), dirs: map[string]*scanDir{}, ignores: map[string]string{}, window: racyWindow}
}

// Close does nothing: a scan holds nothing open between checkpoints.
func (s *Scan) Close() {}

func (s *Scan) lose() { s.lost = true }

// changed is the files (absolute) whose stat differs from the last scan's, those gone
// since and those new, or all: the first scan, a lost one, a changed ignore rule (a
// directory skipped may no longer be) or one that failed.
func (s *Scan) changed(ctx context.Context, j Journal, parentTree string) (paths []string, all bool) {
	if s.dead {
		return nil, true
	}
	s.gen++
	sc := &scanning{Scan: s, ctx: ctx, j: j, parentTree: parentTree, since: time.Now().Add(-s.window).UnixNano(),
		slots: make(chan struct{}, runtime.GOMAXPROCS(0)-1)}
	sc.dir(".")
	sc.wg.Wait()
	err := sc.err
	if err == nil {
		err = ctx.Err()
	}
	for rel, d := range s.dirs { // directories gone, or skipped now: their files too
		if d.gen != s.gen {
			for name := range d.files {
				sc.changed(rel, name)
			}
			delete(s.dirs, rel)
		}
	}
	if rules := stampOf(filepath.Join(j.GitDir, "info", "exclude")); rules != s.rules {
		s.rules, sc.rules = rules, true
	}
	if sc.rules {
		for _, d := range s.dirs {
			d.skip = unknown
		}
		if j.Batch != nil {
			j.Batch.dropRules() // its check-ignore read the old rules
		}
	}
	all = err != nil || sc.count > maxScan || sc.rules || !s.ready || s.lost || len(sc.paths) > maxDirty
	s.dead = sc.count > maxScan
	s.ready, s.lost = err == nil && !s.dead, err != nil
	if all {
		return nil, true
	}
	return sc.paths, false
}

// scanning is one scan under way. Directories are read side by side, one per CPU: a
// directory's own files are its reader's alone; the rest is shared, under mu.
type scanning struct {
	*Scan
	ctx        context.Context
	j          Journal
	parentTree string
	since      int64         // modification times at or after this are racy
	slots      chan struct{} // a slot for each reader besides the first
	wg         sync.WaitGroup

	mu    sync.Mutex
	paths []string
	count int
	rules bool // a .gitignore changed, came or went
	err   error
}

// changed reports a file of dir as changed; mu held. A .gitignore's content is
// compared with what it was: one looked at again for being racy may be the same.
func (sc *scanning) changed(dir, name string) {
	p := filepath.Join(sc.root, filepath.FromSlash(dir), name)
	sc.paths = append(sc.paths, p)
	if name == ".gitignore" {
		rules, err := os.ReadFile(p)
		now := string(rules)
		if err != nil {
			now = "\x00" + err.Error() // none, or unreadable: not rules any file has
		}
		if was, ok := sc.ignores[p]; !ok || was != now {
			sc.rules = true
		}
		sc.ignores[p] = now
	}
}

// fail keeps the scan's first error.
func (sc *scanning) fail(err error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.err == nil {
		sc.err = err
	}
}

// dir scans the directory rel (relative to the root) and, in free readers or itself,
// those under it.
func (sc *scanning) dir(rel string) {
	sc.mu.Lock()
	stop := sc.err != nil || sc.count > maxScan
	d := sc.dirs[rel]
	if d == nil {
		d = &scanDir{files: map[string]stamp{}}
		sc.dirs[rel] = d
	}
	d.gen = sc.gen
	sc.mu.Unlock()
	if stop {
		return
	}
	if err := sc.ctx.Err(); err != nil {
		sc.fail(err)
		return
	}
	changed, subdirs, err := sc.files(rel, d)
	sc.mu.Lock()
	for _, name := range changed {
		sc.changed(rel, name)
	}
	if err != nil && sc.err == nil {
		sc.err = err
	}
	var walked []string
	for _, name := range subdirs {
		child := path.Join(rel, name)
		ok, err := sc.walks(child)
		if err != nil && sc.err == nil {
			sc.err = err
		}
		if ok && err == nil {
			walked = append(walked, child)
		}
	}
	sc.mu.Unlock()
	for _, child := range walked {
		select {
		case sc.slots <- struct{}{}:
			sc.wg.Add(1)
			go func() {
				defer sc.wg.Done()
				defer func() { <-sc.slots }()
				sc.dir(child)
			}()
		default:
			sc.dir(child)
		}
	}
}

// files reads the directory rel and stats its files against d's: the names changed,
// new or gone, and its subdirectories.
func (sc *scanning) files(rel string, d *scanDir) (changed, subdirs []string, err error) {
	f, err := os.Open(filepath.Join(sc.root, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && rel != "." {
			err = nil // gone meanwhile: its files are reported gone
		}
		for name := range d.files {
			changed = append(changed, name)
		}
		d.files = map[string]stamp{}
		return changed, nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: scan %s: %w", rel, err)
	}
	sc.mu.Lock()
	sc.count += len(ents)
	sc.mu.Unlock()
	fd, had, kept := int(f.Fd()), len(d.files), 0
	for _, e := range ents {
		name := e.Name()
		if name == ".git" {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone meanwhile
			}
			return changed, subdirs, fmt.Errorf("checkpoint: scan %s: %w", path.Join(rel, name), err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			subdirs = append(subdirs, name)
			continue
		}
		now := sc.stamp(&st)
		was, ok := d.files[name]
		if ok {
			kept++
		}
		if !ok || was.racy || was != now {
			changed = append(changed, name)
		}
		d.files[name] = now
	}
	if kept < had { // some went: those the directory no longer lists
		listed := make(map[string]bool, len(ents))
		for _, e := range ents {
			listed[e.Name()] = true
		}
		for name := range d.files {
			if !listed[name] {
				changed = append(changed, name)
				delete(d.files, name)
			}
		}
	}
	return changed, subdirs, nil
}

// walks reports whether the directory rel is walked: not when a rule excludes it and
// the last checkpoint holds nothing of it, as git's own walk does not look in it. The
// answer is kept until a rule changes. mu held.
func (sc *scanning) walks(rel string) (bool, error) {
	d := sc.dirs[rel]
	if d != nil && d.skip != unknown {
		if d.skip == skip {
			d.gen = sc.gen // seen, and nothing of it is reported gone
		}
		return d.skip == walk, nil
	}
	v := walk
	if b := sc.j.Batch; b != nil && sc.parentTree != "" {
		ignored, err := b.ignored(sc.ctx, sc.j, []string{rel})
		if err != nil {
			return false, err
		}
		if len(ignored) > 0 {
			held, err := b.lookup(sc.ctx, sc.j, sc.parentTree, rel)
			if err != nil && !errors.Is(err, errFull) {
				return false, err
			}
			if held == nil && err == nil {
				v = skip
			}
		}
	}
	if d == nil {
		d = &scanDir{files: map[string]stamp{}}
		sc.dirs[rel] = d
	}
	d.skip = v
	if v == skip { // walked before, maybe: none of its files is the checkpoint's
		d.gen, d.files = sc.gen, map[string]stamp{}
	}
	return v == walk, nil
}

// stamp is st's stamp, racy when its modification time is within the racy window of
// the scan. (A write sets that time to the clock's; one set into the past by hand moves
// on at the next write.)
func (sc *scanning) stamp(st *unix.Stat_t) stamp {
	m := st.Mtim.Nano()
	return stamp{mode: st.Mode, ino: int64(st.Ino), size: st.Size, mtime: m, ctime: st.Ctim.Nano(),
		racy: m >= sc.since, ok: true}
}

// stampOf is the stamp of the file at p (zero when there is none).
func stampOf(p string) stamp {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return stamp{}
	}
	return stamp{mode: st.Mode, ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ok: true}
}
