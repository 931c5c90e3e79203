// Package agentbin finds the linux agent binaries the host installs into sandbox VMs
// (always linux, amd64 or arm64, the VM's architecture). In the order tried:
//
//   - the running executable, on a linux host of the VM's architecture: it is its own agent;
//   - the agents a release build carries (gzip-compressed, embedded with the build tag
//     embedagents by `make release`, so that one file is the whole install);
//   - pi-sbx-backend-linux-<arch> beside the executable (what `make dist` writes).
//
// A `go install` or plain `go build` embeds none: on a Mac it then finds no agent and
// says how to get one, rather than building or downloading anything at run time.
package agentbin

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Archs returns the VM architectures there are agents for (GOARCH names).
func Archs() []string { return []string{"amd64", "arm64"} }

// Agent is one linux agent binary.
type Agent struct {
	// Arch is its GOARCH.
	Arch string
	// From says where it comes from: "embedded", or a file's path.
	From string
	// SHA256 is the hex SHA-256 of the binary as installed (uncompressed).
	SHA256 string
	// Size is its size in bytes, uncompressed.
	Size int64

	open func() (io.ReadCloser, error)
}

// Open returns the binary's bytes, uncompressed.
func (a Agent) Open() (io.ReadCloser, error) { return a.open() }

// Finder finds agents and remembers what it found (hashing a binary reads all of it).
type Finder struct {
	// Executable returns the running binary (os.Executable when nil).
	Executable func() (string, error)
	// GOOS and GOARCH describe this host (runtime's when empty).
	GOOS, GOARCH string
	// Embedded holds linux-<arch>.gz files (Embedded() for this build's; nil: none).
	Embedded fs.FS

	mu    sync.Mutex
	found map[string]Agent
}

// Default is the Finder of the running build: its executable and its embedded agents.
func Default() *Finder { return &Finder{Embedded: Embedded()} }

// ErrNoAgent is wrapped by Find's error when this build has no agent for an architecture.
var ErrNoAgent = errors.New("no agent binary")

// Find returns the agent for the VM architecture arch (a GOARCH name).
func (f *Finder) Find(arch string) (Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.found[arch]; ok {
		return a, nil
	}
	a, err := f.find(arch)
	if err != nil {
		return Agent{}, err
	}
	if f.found == nil {
		f.found = map[string]Agent{}
	}
	f.found[arch] = a
	return a, nil
}

func (f *Finder) find(arch string) (Agent, error) {
	exe := f.Executable
	if exe == nil {
		exe = os.Executable
	}
	self, err := exe()
	if err != nil {
		return Agent{}, fmt.Errorf("finding this executable: %w", err)
	}
	goos, goarch := f.GOOS, f.GOARCH
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	if goos == "linux" && goarch == arch {
		return fileAgent(arch, self)
	}
	if f.Embedded != nil {
		a, err := embeddedAgent(f.Embedded, arch)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return a, err
		}
	}
	beside := filepath.Join(filepath.Dir(self), "pi-sbx-backend-linux-"+arch)
	if _, err := os.Stat(beside); err == nil {
		return fileAgent(arch, beside)
	}
	return Agent{}, fmt.Errorf("%w for linux/%s: this build carries none (a `go install` or `go build` build); "+
		"use a release (npm pi-sbx, the release archives, `make release`), or build one beside it: "+
		"GOOS=linux GOARCH=%s CGO_ENABLED=0 go build -o %s ./cmd/pi-sbx-backend", ErrNoAgent, arch, arch, beside)
}

func fileAgent(arch, path string) (Agent, error) {
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	sum, size, err := hash(open)
	if err != nil {
		return Agent{}, fmt.Errorf("reading the agent %s: %w", path, err)
	}
	return Agent{Arch: arch, From: path, SHA256: sum, Size: size, open: open}, nil
}

func embeddedAgent(fsys fs.FS, arch string) (Agent, error) {
	name := "linux-" + arch + ".gz"
	if _, err := fs.Stat(fsys, name); err != nil {
		return Agent{}, err
	}
	open := func() (io.ReadCloser, error) {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, err
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		return gunzipped{z, f}, nil
	}
	sum, size, err := hash(open)
	if err != nil {
		return Agent{}, fmt.Errorf("reading the embedded agent for linux/%s: %w", arch, err)
	}
	return Agent{Arch: arch, From: "embedded", SHA256: sum, Size: size, open: open}, nil
}

// gunzipped reads the decompressed stream and closes both it and its source.
type gunzipped struct {
	*gzip.Reader
	src io.Closer
}

func (g gunzipped) Close() error { return errors.Join(g.Reader.Close(), g.src.Close()) }

func hash(open func() (io.ReadCloser, error)) (string, int64, error) {
	r, err := open()
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
