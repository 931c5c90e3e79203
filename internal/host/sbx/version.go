package sbx

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
)

// Versions are the client's and the daemon's versions, as `sbx version` prints them
// ("0.53.0", without the v); Server is "" when sbx printed none.
type Versions struct {
	Client, Server string
}

var (
	clientVersionRE = regexp.MustCompile(`(?m)^\s*Client Version:\s*v?(\d+\.\d+\.\d+[-+.\w]*)`)
	serverVersionRE = regexp.MustCompile(`(?m)^\s*Server Version:\s*v?(\d+\.\d+\.\d+[-+.\w]*)`)
	anyVersionRE    = regexp.MustCompile(`\bv?(\d+\.\d+\.\d+[-+.\w]*)`)
)

// ParseVersions reads `sbx version`'s text: `Client Version: vX.Y.Z <commit>` and
// `Server Version: …` (SBX#149); a lone version number is taken as the client's.
func ParseVersions(out string) (Versions, error) {
	var v Versions
	if m := clientVersionRE.FindStringSubmatch(out); m != nil {
		v.Client = m[1]
	} else if m := anyVersionRE.FindStringSubmatch(out); m != nil {
		v.Client = m[1]
	} else {
		return v, fmt.Errorf("%w: no version in %q", ErrOutput, clip(out, 200))
	}
	if m := serverVersionRE.FindStringSubmatch(out); m != nil {
		v.Server = m[1]
	}
	return v, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Versions runs `sbx version` once and remembers the answer (a failure is not
// remembered: the next call asks again).
func (c *Client) Versions(ctx context.Context) (Versions, error) {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	if c.versions != nil {
		return *c.versions, nil
	}
	res, err := c.run(ctx, call{op: "version", args: []string{"version"}, maxOut: 1 << 16})
	if err != nil {
		return Versions{}, err
	}
	v, err := ParseVersions(string(res.stdout))
	if err != nil {
		return Versions{}, &Error{Op: "version", Err: err}
	}
	c.versions = &v
	return v, nil
}

// knownVersions returns the versions if an earlier call learnt them, without running sbx.
func (c *Client) knownVersions() (Versions, bool) {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	if c.versions == nil {
		return Versions{}, false
	}
	return *c.versions, true
}

// CheckVersion refuses an sbx older than MinVersion, naming the version found and the
// one needed, and how to upgrade.
func (c *Client) CheckVersion(ctx context.Context) error {
	v, err := c.Versions(ctx)
	if err != nil {
		return err
	}
	return CheckMinVersion(v.Client)
}

// CheckMinVersion is CheckVersion's rule for a known client version.
func CheckMinVersion(client string) error {
	if CompareVersions(client, MinVersion) < 0 {
		return fmt.Errorf("%w: found sbx v%s, pi-sbx-backend needs v%s or newer — %s", ErrTooOld, client, MinVersion, UpgradeHint())
	}
	return nil
}

// UpgradeHint is the command that upgrades sbx on this host.
func UpgradeHint() string { return upgradeHint(runtime.GOOS) }

func upgradeHint(goos string) string {
	switch goos {
	case "darwin":
		return "brew upgrade docker/tap/sbx"
	case "windows":
		return "winget upgrade Docker.sbx"
	default:
		return "sudo apt-get install --only-upgrade docker-sbx (or your package manager's upgrade)"
	}
}

// supports reports whether this client's sbx has a verb's flag; when the version is
// unknown (sbx version failed) it says no, so that an old sbx never gets a flag it
// would reject.
func (c *Client) supports(ctx context.Context, verb, flag string) bool {
	v, err := c.Versions(ctx)
	return err == nil && Supports(v.Client, verb, flag)
}
