package sbx

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Places are where FindBin looks for sbx after PI_SBX_BIN and PATH: where its installers
// put it. A macOS app started from the Dock or Finder (an editor, pi from a launcher)
// gets PATH=/usr/bin:/bin:/usr/sbin:/sbin, which has none of them.
type Places struct {
	GOOS string
	// Dirs are searched in order after PATH.
	Dirs []string
	// Globs are searched after Dirs (winget's package folders).
	Globs []string
}

// HostDirs returns this host's Places: Homebrew on Apple silicon (/opt/homebrew/bin)
// and Intel (/usr/local/bin), ~/.local/bin; on Windows winget's links folder and its
// package folders.
func HostDirs() Places {
	home, _ := os.UserHomeDir()
	return PlacesFor(runtime.GOOS, home, os.Getenv("LOCALAPPDATA"))
}

// PlacesFor returns the Places of a platform, for a user's home and (Windows)
// %LOCALAPPDATA%.
func PlacesFor(goos, home, localAppData string) Places {
	if goos == "windows" {
		if localAppData == "" && home != "" {
			localAppData = filepath.Join(home, "AppData", "Local")
		}
		if localAppData == "" {
			return Places{GOOS: goos}
		}
		return Places{GOOS: goos,
			Dirs:  []string{filepath.Join(localAppData, "Microsoft", "WinGet", "Links")},
			Globs: []string{filepath.Join(localAppData, "Microsoft", "WinGet", "Packages", "Docker.sbx*", "sbx.exe")}}
	}
	p := Places{GOOS: goos, Dirs: []string{"/opt/homebrew/bin", "/usr/local/bin"}}
	if home != "" {
		p.Dirs = append(p.Dirs, filepath.Join(home, ".local", "bin"))
	}
	return p
}

// FindBin finds the sbx program: bin (PI_SBX_BIN) if set (a path, used as it is, or a
// name searched like "sbx"), then path (the host's PATH), then p's places. It returns the
// path found, or "sbx" and an error wrapping ErrNotFound that names everything searched
// and how to install.
func FindBin(bin, path string, p Places) (string, error) {
	name, binSet := "sbx", bin != ""
	if binSet {
		name = bin
	}
	if strings.ContainsAny(name, `/\`) {
		return name, nil // a path: used as given (starting it names it if it is wrong)
	}
	exe := name
	if p.GOOS == "windows" && filepath.Ext(exe) == "" {
		exe += ".exe"
	}
	var searched []string
	if binSet {
		searched = append(searched, "PI_SBX_BIN="+name)
	} else {
		searched = append(searched, "PI_SBX_BIN (unset)")
	}
	searched = append(searched, "PATH ("+path+")")
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue // never the current directory: it may be a workspace
		}
		if f := filepath.Join(d, exe); isExecutable(f, p.GOOS) {
			return f, nil
		}
	}
	for _, d := range p.Dirs {
		searched = append(searched, d)
		if f := filepath.Join(d, exe); isExecutable(f, p.GOOS) {
			return f, nil
		}
	}
	for _, g := range p.Globs {
		searched = append(searched, g)
		matches, _ := filepath.Glob(g)
		for _, f := range matches {
			if isExecutable(f, p.GOOS) {
				return f, nil
			}
		}
	}
	return name, fmt.Errorf("%w: searched %s; install it (%s) or set PI_SBX_BIN to its path",
		ErrNotFound, strings.Join(searched, ", "), installHint(p.GOOS))
}

// installHint is the one command that installs sbx on goos.
func installHint(goos string) string {
	switch goos {
	case "darwin":
		return "brew install docker/tap/sbx"
	case "windows":
		return "winget install Docker.sbx"
	default:
		return "curl -fsSL https://get.docker.com | sudo REPO_ONLY=1 sh && sudo apt-get install -y docker-sbx"
	}
}

// InstallHint is installHint for this host.
func InstallHint() string { return installHint(runtime.GOOS) }

func isExecutable(path, goos string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return false
	}
	return goos == "windows" || fi.Mode()&0o111 != 0
}
