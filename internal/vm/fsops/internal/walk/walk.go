package walk

import (
	"context"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

// Entry is one entry found below the walk root. Symbolic links are reported as such
// and never followed, as ripgrep and fd do by default.
type Entry struct {
	Abs  string      // absolute path
	Rel  string      // path relative to the root, '/'-separated
	Type fs.FileMode // type bits from the directory entry
	Name string
	// dir, when set, is the entry's directory, open until the walk has visited its
	// entries; a visitor that opens the entry later must acquire it first, and
	// release it when done (see Dir).
	Dir *fileio.Dir
}

func (e Entry) IsDir() bool { return e.Type.IsDir() }

// Options select the filters of one walk.
type Options struct {
	Names      IgnoreFileNames
	RequireGit bool         // .gitignore counts only inside a git repository (ripgrep's default)
	Global     *IgnoreRules // the user's global gitignore (LoadGlobalGitignore)
	Explicit   *IgnoreRules // fd's global ignore file (LoadFdGlobalIgnore)
	SkipGitDir bool         // never list nor enter ".git" directories (our find)
	// override, when set, is ripgrep's --glob: a whitelist verdict keeps an entry even
	// if an ignore file excludes it, an ignore verdict drops it.
	Override func(rel string, isDir bool) IgnoreMatch
	// onRead, when set, is called after each directory is read (tests count them).
	onRead func()
	// MaxDirHandles, when set, lowers the bound on directories kept open.
	MaxDirHandles int32
}

// walkNode is one directory read by a worker; the emitter waits on done.
type walkNode struct {
	abs, rel string
	ign      *dirIgnore
	dir      *fileio.Dir // the open directory, released by the emitter
	entries  []Entry
	children []*walkNode // per entry: the node of a directory to descend into, else nil
	done     chan struct{}
	started  bool // taken by a worker (walker.mu)
}

// walker reads directories in parallel and hands them to one emitter that visits the
// tree depth-first in sorted order, so output is deterministic however fast each
// directory arrives. Pending directories form a stack, so the directories the emitter
// needs next are read first.
type walker struct {
	opt     Options
	scope   ignoreScope
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []*walkNode
	stopped bool
	// ahead counts directories read (or being read) but not yet reached by the
	// emitter; past walkMaxAhead workers read only the directory the emitter waits for
	// (want), so a walk its visitor ends early (grep's match limit) has not read the
	// rest of the tree meanwhile.
	ahead   int
	reached int // directories the emitter has reached
	want    *walkNode
	// open are the handles of directories read but not yet released by the emitter,
	// released when the walk ends (a walk ended early never reaches them); held
	// counts every handle still open, the visitors' included.
	open map[*fileio.Dir]struct{}
	held atomic.Int32
}

// walkMaxAhead bounds how many directories the workers read ahead of the emitter.
const walkMaxAhead = 64

// Tree visits every entry below root (not root itself) in depth-first order with
// each directory's entries sorted by name, skipping ignored entries. visit returning
// false ends the walk. Unreadable directories are skipped.
func Tree(ctx context.Context, root string, opt Options, visit func(Entry) bool) error {
	w := &walker{opt: opt, scope: ignoreScope{requireGit: opt.RequireGit, global: opt.Global, explicit: opt.Explicit, root: root},
		open: map[*fileio.Dir]struct{}{}}
	w.cond = sync.NewCond(&w.mu)
	top := &walkNode{abs: root, ign: loadParentIgnores(root, opt.Names), done: make(chan struct{})}
	w.stack = append(w.stack, top)
	n := 2 * runtime.GOMAXPROCS(0)
	if n < 4 {
		n = 4
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	stop := context.AfterFunc(ctx, w.stop)
	defer func() {
		stop()
		w.stop()
		wg.Wait()
		for h := range w.open {
			h.Release()
		}
	}()
	w.emit(ctx, top, visit)
	return ctx.Err()
}

func (w *walker) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.cond.Broadcast()
}

// emit visits n's entries in order, descending into each child as it is reached.
func (w *walker) emit(ctx context.Context, n *walkNode, visit func(Entry) bool) bool {
	w.mu.Lock()
	if !n.started {
		w.want = n
		w.mu.Unlock()
		w.cond.Broadcast()
	} else {
		w.mu.Unlock()
	}
	select {
	case <-n.done:
	case <-ctx.Done():
		return false
	}
	w.mu.Lock()
	w.ahead--
	w.reached++
	if n.dir != nil {
		delete(w.open, n.dir)
		defer n.dir.Release()
	}
	w.mu.Unlock()
	w.cond.Signal()
	for i, e := range n.entries {
		if !visit(e) {
			return false
		}
		if c := n.children[i]; c != nil {
			if !w.emit(ctx, c, visit) {
				return false
			}
			n.children[i] = nil // let the finished subtree be collected
		}
	}
	return true
}

// next takes the directory to read from the stack (w.mu held): the top one, or past
// the read-ahead bound only the one the emitter waits for; nil if none may be read.
func (w *walker) next() *walkNode {
	// The bound starts small and grows with the walk, so that a walk ended within its
	// first directories (a match limit met at once) has read little beyond them.
	if w.ahead < min(walkMaxAhead, 2+w.reached) {
		if len(w.stack) == 0 {
			return nil
		}
		n := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		return n
	}
	if w.want == nil || w.want.started {
		return nil
	}
	for i := len(w.stack) - 1; i >= 0; i-- {
		if w.stack[i] == w.want {
			w.stack = append(w.stack[:i], w.stack[i+1:]...)
			return w.want
		}
	}
	return nil
}

func (w *walker) work() {
	buf := make([]byte, 32<<10) // getdents buffer
	for {
		w.mu.Lock()
		var n *walkNode
		for !w.stopped {
			if n = w.next(); n != nil {
				break
			}
			w.cond.Wait()
		}
		if w.stopped {
			w.mu.Unlock()
			return
		}
		n.started = true
		w.ahead++
		w.mu.Unlock()

		w.read(n, buf)
		if w.opt.onRead != nil {
			w.opt.onRead()
		}
		var subdirs []*walkNode
		for _, c := range n.children {
			if c != nil {
				subdirs = append(subdirs, c)
			}
		}
		close(n.done)
		if len(subdirs) > 0 {
			w.mu.Lock()
			for i := len(subdirs) - 1; i >= 0; i-- { // first child on top
				w.stack = append(w.stack, subdirs[i])
			}
			w.mu.Unlock()
			if len(subdirs) > 1 {
				w.cond.Broadcast()
			} else {
				w.cond.Signal()
			}
		}
	}
}

// read lists directory n, loads its ignore files and keeps the entries that survive.
func (w *walker) read(n *walkNode, buf []byte) {
	limit := int32(fileio.MaxDirHandles)
	if w.opt.MaxDirHandles > 0 {
		limit = w.opt.MaxDirHandles
	}
	des, h, err := fileio.ListDir(n.abs, buf, &w.held, limit)
	if err != nil {
		return
	}
	if h != nil {
		w.mu.Lock()
		w.open[h] = struct{}{}
		w.mu.Unlock()
		n.dir = h
	}
	has := func(name string) bool {
		for _, d := range des {
			if d.Name == name {
				return true
			}
		}
		return false
	}
	special := false
	for _, d := range des {
		switch d.Name {
		case ".git", ".gitignore", ".ignore", w.opt.Names.Custom:
			special = true
		}
	}
	if special {
		n.ign = loadDirIgnore(n.ign, n.abs, has, w.opt.Names)
	}
	n.entries = make([]Entry, 0, len(des))
	n.children = make([]*walkNode, 0, len(des))
	prefix := n.rel
	if prefix != "" {
		prefix += "/"
	}
	for _, d := range des {
		name := d.Name
		if fileio.IsOwnTemp(name) {
			continue
		}
		e := Entry{Abs: n.abs + "/" + name, Rel: prefix + name, Type: d.Type, Name: name, Dir: h}
		if n.abs == "/" {
			e.Abs = "/" + name
		}
		dir := e.IsDir()
		if dir && w.opt.SkipGitDir && name == ".git" {
			continue
		}
		verdict := matchNone
		if w.opt.Override != nil {
			verdict = w.opt.Override(e.Rel, dir)
		}
		if verdict == matchIgnore || (verdict == matchNone && n.ign.ignored(e.Abs, dir, w.scope)) {
			continue
		}
		n.entries = append(n.entries, e)
		var child *walkNode
		if dir {
			child = &walkNode{abs: e.Abs, rel: e.Rel, ign: n.ign, done: make(chan struct{})}
		}
		n.children = append(n.children, child)
	}
}
