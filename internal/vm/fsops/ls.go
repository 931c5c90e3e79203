package fsops

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

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
	st, err := os.Stat(dir)
	if err != nil {
		return result.Result{}, newError("Path not found: " + dir)
	}
	if !st.IsDir() {
		return result.Result{}, newError("Not a directory: " + dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return result.Result{}, newError("Cannot read directory: " + fileio.NodeErr(err, "scandir", dir).Error())
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return result.Result{}, newError("Cannot read directory: " + fileio.NodeErr(err, "scandir", dir).Error())
	}
	sortLikeJS(names)

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
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			continue // e.g. a broken symlink: pi skips entries it cannot stat
		}
		if st.IsDir() {
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
