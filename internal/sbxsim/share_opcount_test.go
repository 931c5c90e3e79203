//go:build linux && opcount

package sbxsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops"
)

// lockedBuf keeps what is written to it while on.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
	on bool
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		l.b.Write(p)
	}
	return len(p), nil
}

// TestShareOpCount counts the FUSE requests each of the agent's file tools sends over
// the share (cache auto) for the bench's typical calls, and times them: every request is
// a round trip to the host on a Mac, so the count is what a change to the tools must
// lower. It serves OPC_DIR (a copy of Go's src with bench/small.txt and bench/edit.go,
// as BenchmarkVsPi's) in this process, each request waiting OPC_LAT (default 100µs);
// OPC_ONLY selects cases by name. A tool, not a check: it runs only with -tags opcount.
//
//	OPC_DIR=/tmp/gosrc go test -tags opcount -run TestShareOpCount -v ./internal/sbxsim
func TestShareOpCount(t *testing.T) {
	rxRe := regexp.MustCompile(`rx \d+: (\w+)`)
	dir := os.Getenv("OPC_DIR")
	if dir == "" {
		t.Skip("OPC_DIR names no tree to serve")
	}
	mnt := t.TempDir()
	lat := DefaultShareLatency
	if l := os.Getenv("OPC_LAT"); l != "" {
		var err error
		if lat, err = time.ParseDuration(l); err != nil {
			t.Fatal(err)
		}
	}
	s := &Share{Type: "fuse", Cache: ShareCacheAuto, Latency: lat}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	lr := &fs.LoopbackRoot{Path: dir, Dev: st.Dev, NewNode: newShareNode}
	root := newShareNode(lr, nil, "", &st)
	lr.RootNode = root
	to := s.timeouts()
	opts := &fs.Options{EntryTimeout: &to, AttrTimeout: &to, NegativeTimeout: &to}
	lb := &lockedBuf{}
	// go-fuse's debug log names each request ("rx N: OPCODE …"): counted per case.
	opts.MountOptions = fuse.MountOptions{AllowOther: true, DirectMountStrict: true, Options: []string{"default_permissions"},
		FsName: dir, Name: "virtiofs", Debug: true, Logger: log.New(lb, "", 0)}
	raw := &shareFS{RawFileSystem: fs.NewNodeFS(root, opts), share: s}
	srv, err := fuse.NewServer(raw, mnt, &opts.MountOptions)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	ctx := context.Background()
	q := fsops.NewMutationQueue()
	f := func(v float64) *float64 { return &v }
	content2k, err := os.ReadFile(mnt + "/bench/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	c100k := strings.Repeat(string(content2k), 50)
	cases := []struct {
		name string
		fn   func() error
	}{
		{"read 2k", func() error { _, e := fsops.Read(ctx, mnt, fsops.ReadArgs{Path: "bench/small.txt"}); return e }},
		{"read print.go", func() error { _, e := fsops.Read(ctx, mnt, fsops.ReadArgs{Path: "fmt/print.go"}); return e }},
		{"read off/lim", func() error {
			_, e := fsops.Read(ctx, mnt, fsops.ReadArgs{Path: "fmt/print.go", Offset: f(100), Limit: f(50)})
			return e
		}},
		{"write 2k", func() error {
			_, e := fsops.Write(ctx, mnt, fsops.WriteArgs{Path: "bench/w2k.txt", Content: string(content2k)}, q)
			return e
		}},
		{"write 100k", func() error {
			_, e := fsops.Write(ctx, mnt, fsops.WriteArgs{Path: "bench/w100k.txt", Content: c100k}, q)
			return e
		}},
		{"edit", func() error {
			// Two edits, the second undoing the first, as the bench's alternate.
			for _, j := range []string{`{"path":"bench/edit.go","edits":[{"oldText":"value := 1","newText":"value := 2"}]}`,
				`{"path":"bench/edit.go","edits":[{"oldText":"value := 2","newText":"value := 1"}]}`} {
				var a fsops.EditArgs
				if err := json.Unmarshal([]byte(j), &a); err != nil {
					return err
				}
				if _, err := fsops.Edit(ctx, mnt, a, q); err != nil {
					return err
				}
			}
			return nil
		}},
		{"ls fmt", func() error { _, e := fsops.Ls(ctx, mnt, fsops.LsArgs{Path: "fmt"}); return e }},
		{"ls root", func() error { _, e := fsops.Ls(ctx, mnt, fsops.LsArgs{}); return e }},
		{"find net/http", func() error {
			_, e := fsops.Find(ctx, mnt, fsops.FindArgs{Pattern: "*.go", Path: "net/http"})
			return e
		}},
		{"find tree", func() error { _, e := fsops.Find(ctx, mnt, fsops.FindArgs{Pattern: "**/*_test.go"}); return e }},
		{"grep pkg", func() error {
			_, e := fsops.Grep(ctx, mnt, fsops.GrepArgs{Pattern: "func Println", Path: "fmt", Literal: true})
			return e
		}},
		{"grep tree nomatch", func() error { _, e := fsops.Grep(ctx, mnt, fsops.GrepArgs{Pattern: "func.*zzq"}); return e }},
		{"grep limit1", func() error {
			_, e := fsops.Grep(ctx, mnt, fsops.GrepArgs{Pattern: "if err != nil", Limit: f(1)})
			return e
		}},
	}
	only := regexp.MustCompile(os.Getenv("OPC_ONLY"))
	for _, c := range cases {
		if !only.MatchString(c.name) {
			continue
		}
		if err := c.fn(); err != nil { // warm, as the bench's first calls
			t.Fatalf("%s: %v", c.name, err)
		}
		lb.mu.Lock()
		lb.b.Reset()
		lb.on = true
		lb.mu.Unlock()
		start := time.Now()
		if err := c.fn(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d := time.Since(start)
		lb.mu.Lock()
		lb.on = false
		counts := map[string]int{}
		total := 0
		for _, m := range rxRe.FindAllStringSubmatch(lb.b.String(), -1) {
			counts[m[1]]++
			total++
		}
		lb.mu.Unlock()
		var ks []string
		for k := range counts {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s=%d", k, counts[k]))
		}
		t.Logf("%-18s %8.2fms ops=%d %s", c.name, float64(d.Microseconds())/1000, total, strings.Join(parts, " "))
	}
}
