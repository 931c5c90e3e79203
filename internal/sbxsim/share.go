//go:build linux

package sbxsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Share says how a sandbox's workspaces reach it. nil (the default) is a bind mount of
// the host's own file system; Type "fuse" is a virtiofs-shaped share: a FUSE passthrough
// file system served by a host process, each operation paying Latency, the guest
// caching as virtiofsd's cache mode Cache says. A Mac's sbx shares workspaces over
// virtiofs; this makes its round trips and its cache (stale reads included) real here.
type Share struct {
	Type    string        `json:"type"`
	Cache   string        `json:"cache"`
	Latency time.Duration `json:"latency"`
}

// Share cache modes, as virtiofsd's --cache: none (no attribute or entry caching, no
// page cache: every read goes to the host), auto (1 s entry/attribute timeouts, page
// cache dropped at each open), always (a day's timeouts, page cache kept across opens).
const (
	ShareCacheNone   = "none"
	ShareCacheAuto   = "auto"
	ShareCacheAlways = "always"
)

// DefaultShareLatency is the round trip added to each FUSE operation when
// SBXSIM_SHARE_LATENCY is unset. No public per-operation figure for virtiofs on Apple
// silicon was found (reports give whole-workload ratios: git status 6.7 min vs 44 s,
// docker/roadmap#7; Maven 13 min vs 2:30, SBX#31); 100 µs is a conservative
// round trip through the hypervisor to a host daemon and back.
const DefaultShareLatency = 100 * time.Microsecond

// shareFrom reads SBXSIM_SHARE (fuse, or empty/off for bind mounts),
// SBXSIM_SHARE_CACHE (none|auto|always, default auto as virtiofsd's) and
// SBXSIM_SHARE_LATENCY (a Go duration, default DefaultShareLatency).
func shareFrom(lookup func(string) (string, bool)) (*Share, error) {
	v, _ := lookup("SBXSIM_SHARE")
	switch v {
	case "", "off", "bind":
		return nil, nil
	case "fuse":
	default:
		return nil, fmt.Errorf("SBXSIM_SHARE=%q: want fuse or off", v)
	}
	s := &Share{Type: "fuse", Cache: ShareCacheAuto, Latency: DefaultShareLatency}
	if c, _ := lookup("SBXSIM_SHARE_CACHE"); c != "" {
		switch c {
		case ShareCacheNone, ShareCacheAuto, ShareCacheAlways:
			s.Cache = c
		default:
			return nil, fmt.Errorf("SBXSIM_SHARE_CACHE=%q: want none, auto or always", c)
		}
	}
	if l, _ := lookup("SBXSIM_SHARE_LATENCY"); l != "" {
		d, err := time.ParseDuration(l)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("SBXSIM_SHARE_LATENCY=%q: want a duration (100us, 0)", l)
		}
		s.Latency = d
	}
	return s, nil
}

// timeouts are the entry and attribute timeouts of a cache mode, as virtiofsd's.
func (s *Share) timeouts() time.Duration {
	switch s.Cache {
	case ShareCacheNone:
		return 0
	case ShareCacheAlways:
		return 24 * time.Hour
	default:
		return time.Second
	}
}

// startShare starts the host process serving dir over FUSE, mounted at mnt (a host
// directory of the sandbox's own), and returns once the mount is there. The process
// serves until the last mount of that file system is gone: the caller binds it into
// the sandbox, then detaches mnt (detachShare), so the sandbox's mount namespace alone
// keeps it alive and its end ends the server.
func (m *Manager) startShare(ctx context.Context, s *Share, dir, mnt, logPath string) error {
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		return fmt.Errorf("making the share's mount point: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(m.Self, "__share", s.Cache, s.Latency.String(), dir, mnt)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the share of %s: %w", dir, err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case l := <-line:
		if l == "ready" {
			_ = cmd.Process.Release() // it outlives this command
			return nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("sharing %s: the share server said %q%s", dir, l, logTail(logPath))
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("sharing %s: %w", dir, ctx.Err())
	case <-time.After(initTimeout):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("sharing %s: no answer from the share server in %s", dir, initTimeout)
	}
}

// detachShare takes the host's mount of a share away (the sandbox keeps its own).
func detachShare(mnt string) {
	_ = unix.Unmount(mnt, unix.MNT_DETACH)
}

// shareMountPoint is where a sandbox's i-th share is mounted on the host while the
// sandbox starts.
func (m *Manager) shareMountPoint(name string, i int) string {
	return filepath.Join(m.Store.dir(name), "share", strconv.Itoa(i))
}

// RunShare is the hidden `__share CACHE LATENCY DIR MNT` mode: it serves DIR at MNT
// through FUSE until the file system is unmounted everywhere. It prints "ready" once
// mounted, or "error: …".
func RunShare(args []string) int {
	fail := func(err error) int {
		fmt.Printf("error: %v\n", err)
		fmt.Fprintf(os.Stderr, "sbxsim share: %v\n", err)
		return 1
	}
	if len(args) != 4 {
		return fail(errors.New("usage: __share CACHE LATENCY DIR MNT"))
	}
	lat, err := time.ParseDuration(args[1])
	if err != nil {
		return fail(fmt.Errorf("latency %q: %w", args[1], err))
	}
	s := &Share{Type: "fuse", Cache: args[0], Latency: lat}
	srv, err := mountShare(s, args[2], args[3])
	if err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	srv.Wait()
	return 0
}

// mountShare mounts dir's passthrough at mnt and serves it in the background.
//
// go-fuse (hanwen/go-fuse/v2) because it is the maintained pure-Go FUSE library with a
// loopback node ready to wrap, and it speaks the kernel features virtiofs's guest side
// has: idmapped FUSE mounts (so the workspace keeps today's idmapped ownership rules),
// entry/attribute timeouts and the open flags (keep_cache, direct_io) virtiofsd's cache
// modes are made of.
func mountShare(s *Share, dir, mnt string) (*fuse.Server, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return nil, fmt.Errorf("serving %s: %w", dir, err)
	}
	lr := &fs.LoopbackRoot{Path: dir, Dev: st.Dev, NewNode: newShareNode}
	root := newShareNode(lr, nil, "", &st)
	lr.RootNode = root
	t := s.timeouts()
	opts := &fs.Options{EntryTimeout: &t, AttrTimeout: &t, NegativeTimeout: &t}
	opts.MountOptions = fuse.MountOptions{
		AllowOther:        true,
		DirectMountStrict: true, // root: no fusermount
		IDMappedMount:     true,
		// The kernel checks permissions against the ids the sandbox sees, as with
		// virtiofs (and as an idmapped FUSE mount requires).
		Options: []string{"default_permissions"},
		FsName:  dir,
		Name:    "virtiofs",
		// virtiofsd turns readdirplus off with cache=none.
		DisableReadDirPlus: s.Cache == ShareCacheNone,
	}
	raw := &shareFS{RawFileSystem: fs.NewNodeFS(root, opts), share: s}
	srv, err := fuse.NewServer(raw, mnt, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("mounting the share of %s at %s: %w", dir, mnt, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		return nil, fmt.Errorf("mounting the share of %s: %w", dir, err)
	}
	return srv, nil
}

// shareFS is the file system as the guest meets it over virtiofs: each request waits
// the share's latency (one round trip to the host daemon), and opens carry the cache
// mode's flags.
type shareFS struct {
	fuse.RawFileSystem
	share *Share
}

// wait is one round trip; a cancelled request stops waiting (one longer than
// shortWaitMax).
func (f *shareFS) wait(cancel <-chan struct{}) {
	if f.share.Latency <= 0 {
		return
	}
	if f.share.Latency <= shortWaitMax {
		// Go's timers fire about a millisecond late on a machine whose runtime poller
		// sleeps in whole milliseconds (measured: a 100 µs timer waited 1.1 ms, p50,
		// on the 2-core test machine): the share's 100 µs would be 1.1 ms. The
		// request's own thread sleeps instead (nanosleep: 180 µs there, the kernel's
		// timer slack included).
		ts := unix.NsecToTimespec(int64(f.share.Latency))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
		return
	}
	t := time.NewTimer(f.share.Latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-cancel:
	}
}

// shortWaitMax is the longest round trip wait sleeps through on its thread.
const shortWaitMax = 2 * time.Millisecond

// openFlags are the FOPEN_* flags virtiofsd sets for the cache mode: direct I/O (no
// page cache) for none, keep the page cache across opens for always, and for auto
// neither (the kernel drops the file's pages at each open).
func (f *shareFS) openFlags() uint32 {
	switch f.share.Cache {
	case ShareCacheNone:
		return fuse.FOPEN_DIRECT_IO
	case ShareCacheAlways:
		return fuse.FOPEN_KEEP_CACHE
	}
	return 0
}

func (f *shareFS) Lookup(c <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Lookup(c, h, name, out)
}

func (f *shareFS) GetAttr(c <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.GetAttr(c, in, out)
}

func (f *shareFS) Statx(c <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Statx(c, in, out)
}

func (f *shareFS) SetAttr(c <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.SetAttr(c, in, out)
}

func (f *shareFS) Mknod(c <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Mknod(c, in, name, out)
}

func (f *shareFS) Mkdir(c <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Mkdir(c, in, name, out)
}

func (f *shareFS) Unlink(c <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Unlink(c, h, name)
}

func (f *shareFS) Rmdir(c <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Rmdir(c, h, name)
}

func (f *shareFS) Rename(c <-chan struct{}, in *fuse.RenameIn, from, to string) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Rename(c, in, from, to)
}

func (f *shareFS) Link(c <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Link(c, in, name, out)
}

func (f *shareFS) Symlink(c <-chan struct{}, h *fuse.InHeader, to, name string, out *fuse.EntryOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Symlink(c, h, to, name, out)
}

func (f *shareFS) Readlink(c <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	f.wait(c)
	return f.RawFileSystem.Readlink(c, h)
}

func (f *shareFS) Access(c <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Access(c, in)
}

func (f *shareFS) GetXAttr(c <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	f.wait(c)
	return f.RawFileSystem.GetXAttr(c, h, attr, dest)
}

func (f *shareFS) ListXAttr(c <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	f.wait(c)
	return f.RawFileSystem.ListXAttr(c, h, dest)
}

func (f *shareFS) Create(c <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	f.wait(c)
	st := f.RawFileSystem.Create(c, in, name, out)
	out.OpenFlags |= f.openFlags()
	return st
}

// Tmpfile (open with O_TMPFILE) is refused, so the guest gets EOPNOTSUPP: the Mac's
// virtiofs server runs on a host with no O_TMPFILE (an assumption: no public source
// says), and go-fuse's loopback would make a file it can neither link nor chmod.
func (f *shareFS) Tmpfile(c <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	f.wait(c)
	return fuse.ENOSYS
}

func (f *shareFS) Open(c <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.wait(c)
	st := f.RawFileSystem.Open(c, in, out)
	out.OpenFlags |= f.openFlags()
	return st
}

func (f *shareFS) Read(c <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	f.wait(c)
	return f.RawFileSystem.Read(c, in, buf)
}

func (f *shareFS) Write(c <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	f.wait(c)
	return f.RawFileSystem.Write(c, in, data)
}

func (f *shareFS) Flush(c <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Flush(c, in)
}

func (f *shareFS) Fsync(c <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Fsync(c, in)
}

func (f *shareFS) Fallocate(c <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.Fallocate(c, in)
}

func (f *shareFS) OpenDir(c <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.OpenDir(c, in, out)
}

func (f *shareFS) ReadDir(c <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.ReadDir(c, in, out)
}

func (f *shareFS) ReadDirPlus(c <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.ReadDirPlus(c, in, out)
}

func (f *shareFS) StatFs(c <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	f.wait(c)
	return f.RawFileSystem.StatFs(c, h, out)
}

// startShares serves each workspace bound from the host itself (not a clone's) over
// FUSE when the sandbox has a share, pointing init at the share's host mount; it returns
// those mounts, which the caller detaches once init has bound them (or failed).
//
// A kernel that cannot idmap a FUSE mount (before Linux 6.12) would show agent files it
// may not write: such a workspace is bound directly instead, with a warning.
func (m *Manager) startShares(ctx context.Context, sb *Sandbox, cfg *initConfig, userns []*os.File, logPath string) ([]string, error) {
	if sb.Share == nil {
		return nil, nil
	}
	var mnts []string
	for i := range cfg.Workspaces {
		w := &cfg.Workspaces[i]
		if w.From != "" {
			continue
		}
		mnt := m.shareMountPoint(sb.Name, i)
		detachShare(mnt) // a share left by a start that died half-way
		if err := m.startShare(ctx, sb.Share, w.Path, mnt, logPath); err != nil {
			return mnts, err
		}
		mnts = append(mnts, mnt)
		if i < len(cfg.Userns) && cfg.Userns[i] > 0 {
			if err := canIdmap(mnt, userns[cfg.Userns[i]-initUsernsFd]); err != nil {
				fmt.Fprintf(m.Stderr, "WARN: the share of %s cannot be idmapped here (%v); it is bound directly\n", w.Path, err)
				continue
			}
		}
		w.From = mnt
	}
	return mnts, nil
}

// shareNode is a loopback node whose open files are served by this process: go-fuse
// would otherwise hand the kernel the host file itself (FUSE passthrough), and reads and
// writes would skip both the round trip and the cache mode, which virtiofs does not.
type shareNode struct {
	*fs.LoopbackNode
}

func newShareNode(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
	return &shareNode{&fs.LoopbackNode{RootData: r}}
}

// Open opens the host file, served through this process.
// The guest's O_DIRECT is dropped, as virtiofsd does unless told otherwise: it asks the
// guest not to cache, not the host's disk to take unaligned direct I/O.
func (n *shareNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_DIRECT)
	if fh != nil {
		fh = &shareFile{fh}
	}
	return fh, fl, errno
}

// Create creates the host file, served through this process (O_DIRECT dropped, as Open).
func (n *shareNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_DIRECT, mode, out)
	if fh != nil {
		fh = &shareFile{fh}
	}
	return in, fh, fl, errno
}

// shareFile is a loopback file without its passthrough descriptor.
type shareFile struct {
	f fs.FileHandle
}

func (s *shareFile) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return s.f.(fs.FileReader).Read(ctx, dest, off)
}

func (s *shareFile) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	return s.f.(fs.FileWriter).Write(ctx, data, off)
}

func (s *shareFile) Flush(ctx context.Context) syscall.Errno {
	return s.f.(fs.FileFlusher).Flush(ctx)
}

func (s *shareFile) Release(ctx context.Context) syscall.Errno {
	return s.f.(fs.FileReleaser).Release(ctx)
}

func (s *shareFile) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return s.f.(fs.FileFsyncer).Fsync(ctx, flags)
}

func (s *shareFile) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return s.f.(fs.FileGetattrer).Getattr(ctx, out)
}

func (s *shareFile) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return s.f.(fs.FileSetattrer).Setattr(ctx, in, out)
}

func (s *shareFile) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return s.f.(fs.FileLseeker).Lseek(ctx, off, whence)
}

func (s *shareFile) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	return s.f.(fs.FileAllocater).Allocate(ctx, off, size, mode)
}

// canIdmap tries an idmapped copy of the mount at dir through the user namespace ns.
func canIdmap(dir string, ns *os.File) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	return unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns.Fd())})
}
