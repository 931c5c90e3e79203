package review

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkReview: a review of 300 changed files (the list and every diff) against one
// plain `git diff-tree -p` of the same commits, the least any review costs.
// go test ./review -run '^$' -bench Review -benchtime 5x
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
