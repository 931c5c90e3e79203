package fsops

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestLsStatsOnlyWhereTypeCannotTell checks that ls answers each entry as a stat would
// (pi stats every entry) while stat'ing only once per directory plus once per entry
// whose type does not tell: over a shared workspace each stat is a round trip.
func TestLsStatsOnlyWhereTypeCannotTell(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "d"+strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"tofile": "f1", "todir": "d1", "broken": "missing", "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		stat      func(string) (fs.FileInfo, error)
		wantCalls int
	}{
		{"searchable", os.Stat, 1 + 4 + 1}, // the first entry, four links, the fifo
		{"no search permission", func(p string) (fs.FileInfo, error) {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.EACCES}
		}, len(des)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			s := lsStatter{dir: dir, stat: func(p string) (fs.FileInfo, error) {
				calls++
				return tt.stat(p)
			}}
			for _, d := range des {
				isDir, ok := s.isDir(d.Name(), d.Type())
				st, err := tt.stat(filepath.Join(dir, d.Name()))
				if ok != (err == nil) || (ok && isDir != st.IsDir()) {
					t.Errorf("%s: isDir, ok = %v, %v; stat says dir %v, err %v", d.Name(), isDir, ok, err == nil && st.IsDir(), err)
				}
			}
			if calls != tt.wantCalls {
				t.Errorf("%d stats for %d entries, want %d", calls, len(des), tt.wantCalls)
			}
		})
	}
}
