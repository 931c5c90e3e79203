//go:build bench

package review

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkReview: a review of 300 changed files (the list and every diff) against one
// plain `git diff-tree -p` of the same commits, the least any review costs.
// go test -tags bench ./internal/host/review -run '^$' -bench Review -benchtime 5x
func BenchmarkReview(b *testing.B) {
	t := &testing.T{}
	base, head := map[string]spec{}, map[string]spec{}
	for i := range 300 {
		p := fmt.Sprintf("pkg%02d/file%03d.go", i%20, i)
		base[p] = spec{content: fmt.Sprintf("package p\n\nconst A%d = %d\n", i, i)}
		head[p] = spec{content: fmt.Sprintf("package p\n\nconst A%d = %d\nconst B%d = 1\n", i, i+1, i)}
	}
	c, g := fixture(t, base, head)
	ctx := context.Background()
	b.Run("review", func(b *testing.B) {
		for b.Loop() {
			files, err := Files(ctx, g, c)
			if err != nil {
				b.Fatal(err)
			}
			if err := Write(ctx, io.Discard, g, c, files); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-diff-tree", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "--git-dir="+c.GitDir, "diff-tree", "-p", "-M", c.Base, c.Head)
			cmd.Stdout, cmd.Env = &bytes.Buffer{}, os.Environ()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLand: landing 300 changed files against git writing the same 300 files into
// an empty tree (read-tree, checkout-index: no checks, no record), the least a land costs.
// go test -tags bench ./internal/host/review -run '^$' -bench Land -benchtime 5x
func BenchmarkLand(b *testing.B) {
	base, head := map[string]spec{}, map[string]spec{}
	for i := range 300 {
		p := fmt.Sprintf("pkg%02d/file%03d.go", i%20, i)
		base[p] = spec{content: fmt.Sprintf("package p\n\nconst A%d = %d\n", i, i)}
		head[p] = spec{content: fmt.Sprintf("package p\n\nconst A%d = %d\nconst B%d = 1\n", i, i+1, i)}
	}
	ctx := context.Background()
	b.Run("land", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			c, g := fixture(&testing.T{}, base, head)
			b.StartTimer()
			if _, err := Land(ctx, g, c, Selection{All: true}, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-checkout-index", func(b *testing.B) {
		c, _ := fixture(&testing.T{}, base, head)
		for b.Loop() {
			b.StopTimer()
			dir, idx := b.TempDir(), filepath.Join(b.TempDir(), "index")
			b.StartTimer()
			env := append(os.Environ(), "GIT_DIR="+c.GitDir, "GIT_WORK_TREE="+dir, "GIT_INDEX_FILE="+idx)
			for _, args := range [][]string{{"read-tree", c.Head}, {"checkout-index", "-a"}} {
				cmd := exec.Command("git", args...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatal(err, string(out))
				}
			}
		}
	})
}
