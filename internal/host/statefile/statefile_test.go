package statefile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "x.json")
	var wg sync.WaitGroup
	for i := range 50 { // concurrent writers of one record: the last rename wins, whole
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := WriteJSON(path, map[string]int{"n": i}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("not one whole record: %v: %q", err, data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := WriteJSON(path, func() {}); err == nil {
		t.Error("a value JSON cannot hold was written")
	}
}
