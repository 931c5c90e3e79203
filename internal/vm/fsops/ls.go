package fsops

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/collation"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// LsArgs are ls's arguments.
type LsArgs struct {
	Path  string   `json:"path,omitempty"`
	Limit *float64 `json:"limit,omitempty"`
}

// LsDetails is ls's details object; nil when there is nothing to report.
type LsDetails struct {
	EntryLimitReached int              `json:"entryLimitReached,omitempty"`
	Truncation        *truncate.Result `json:"truncation,omitempty"`
}

const lsDefaultLimit = 500

// jsMaxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the maxLines pi passes to
// truncateHead for grep, find and ls (it shows up in details.truncation).
const jsMaxSafeInteger = 1<<53 - 1

// Ls is pi's ls tool: the directory's entries (dotfiles included) sorted as pi sorts
// them, "/" after directories, at most limit entries and 50KB.
func Ls(ctx context.Context, cwd string, a LsArgs) (result.Result, error) {
	if err := ctx.Err(); err != nil {
		return result.Result{}, fileio.ErrAborted
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	dir, err := ResolveToCwd(p, cwd)
	if err != nil {
		return result.Result{}, err
	}
	limit := effectiveLimit(a.Limit, lsDefaultLimit)
	f, err := openLsDir(dir)
	if err != nil {
		return result.Result{}, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return result.Result{}, newError("Cannot read directory: " + fileio.NodeErr(err, "scandir", dir).Error())
	}
	names := make([]string, len(des))
	types := make(map[string]fs.FileMode, len(des))
	for i, d := range des {
		names[i] = d.Name()
		types[names[i]] = d.Type()
	}
	sortLikeJS(names)

	// Entries are stat'ed in the open directory: by path, each stat would resolve the
	// directory again, a lookup and a getattr per component over a share.
	dirFd := int(f.Fd())
	stater := lsStatter{dir: dir, stat: func(p string) (fs.FileInfo, error) {
		var st unix.Stat_t
		if err := unix.Fstatat(dirFd, filepath.Base(p), &st, 0); err != nil {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
		}
		return lsStatInfo{name: filepath.Base(p), dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
	}}
	var out []string
	limitReached := false
	for _, name := range names {
		if fileio.IsOwnTemp(name) {
			continue // an atomic replace in progress: pi, writing in place, never shows one
		}
		if len(out) >= limit {
			limitReached = true
			break
		}
		if ctx.Err() != nil {
			return result.Result{}, fileio.ErrAborted
		}
		// Node decodes names as UTF-8; a name that is not valid UTF-8 comes back
		// altered, its stat fails and pi skips it.
		if !utf8.ValidString(name) {
			continue
		}
		isDir, ok := stater.isDir(name, types[name])
		if !ok {
			continue // e.g. a broken symlink: pi skips entries it cannot stat
		}
		if isDir {
			name += "/"
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return result.Text("(empty directory)", nil), nil
	}
	tr := truncate.Head(strings.Join(out, "\n"), truncate.Options{MaxLines: jsMaxSafeInteger})
	text := tr.Content
	var d LsDetails
	var notices []string
	if limitReached {
		notices = append(notices, strconv.Itoa(limit)+" entries limit reached. Use limit="+strconv.Itoa(2*limit)+" for more")
		d.EntryLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, byteLimitNotice())
		d.Truncation = &tr
	}
	return withNotices(text, notices, d), nil
}

// openLsDir opens dir for ls with pi's errors: "Path not found" when stat fails, "Not a
// directory", "Cannot read directory" when it cannot be opened. It opens first and asks
// the rest only when that fails: a directory that opens needs no stat of its own (one
// path resolution instead of two, each a lookup and a getattr per component over a
// share with its cache off).
func openLsDir(dir string) (*os.File, error) {
	if f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
		return f, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, newError("Path not found: " + dir)
	}
	if !st.IsDir() {
		return nil, newError("Not a directory: " + dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, newError("Cannot read directory: " + fileio.NodeErr(err, "scandir", dir).Error())
	}
	return f, nil
}

// lsStatInfo is what ls needs of a stat: whether the entry is a directory.
type lsStatInfo struct {
	name string
	dir  bool
}

func (i lsStatInfo) Name() string { return i.name }
func (i lsStatInfo) Size() int64  { return 0 }
func (i lsStatInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir
	}
	return 0
}
func (i lsStatInfo) ModTime() time.Time { return time.Time{} }
func (i lsStatInfo) IsDir() bool        { return i.dir }
func (i lsStatInfo) Sys() any           { return nil }

// lsStatter answers, for each entry of one directory, what pi's statSync of it says:
// whether it is a directory, and whether the stat succeeds at all. Over a shared
// workspace (virtiofs) every stat is a round trip to the host, so it stats only where
// the directory entry's type cannot answer: a regular file or a directory is what its
// type says once one stat has shown the directory's entries can be looked up at all (a
// directory without search permission lists its names but fails every stat, and pi
// then skips them all). Symbolic links and other types are stat'ed, since statSync
// follows links.
type lsStatter struct {
	dir  string
	stat func(string) (fs.FileInfo, error)
	// searchable: 0 not yet known, 1 entries can be stat'ed, -1 they cannot.
	searchable int
}

func (s *lsStatter) isDir(name string, typ fs.FileMode) (isDir, ok bool) {
	if s.searchable == 1 && (typ.IsRegular() || typ.IsDir()) {
		return typ.IsDir(), true
	}
	st, err := s.stat(filepath.Join(s.dir, name))
	if err != nil {
		if s.searchable == 0 && fileio.ErrCode(err) == "EACCES" {
			s.searchable = -1
		}
		return false, false
	}
	if s.searchable == 0 {
		s.searchable = 1
	}
	return st.IsDir(), true
}

// sortLikeJS sorts names as pi does: a.toLowerCase().localeCompare(b.toLowerCase()),
// i.e. ICU root collation (pi's Node's: ICU 78, Unicode 17) of the lowercased names.
// Names that collate equal keep byte order (pi keeps readdir order, which the
// filesystem decides).
func sortLikeJS(names []string) {
	type keyed struct {
		key  string
		name string
	}
	var buf collation.Buffer
	var scratch []byte
	ks := make([]keyed, len(names))
	for i, n := range names {
		scratch = collation.Key(&buf, scratch[:0], jsLower(n))
		ks[i] = keyed{string(scratch), n}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].key != ks[j].key {
			return ks[i].key < ks[j].key
		}
		return ks[i].name < ks[j].name
	})
	for i := range ks {
		names[i] = ks[i].name
	}
}
