package sbx

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Cloud sandboxes (`sbx --cloud`, from 0.45, a paid plan) run in Docker's cloud: the
// same verbs with the global --cloud, no workspace mount (files go in and out with
// `sbx --cloud cp`), a size instead of --cpus/--memory, a time to live (default 1 h, at
// most 24 h from creation) with a fate at its end, names without periods, and exec
// without -d, -u or --privileged (the contract table's Local flags).

// Cloud sizes (PI_SBX_CLOUD_SIZE): micro 1 CPU/2 GB … xl 16 CPU/32 GB.
var CloudSizes = []string{"micro", "small", "medium", "large", "xl"}

// Cloud lifecycle limits.
const (
	// CloudMaxLife is how long after its creation a cloud sandbox may live at most: its
	// time to live is never extended past it.
	CloudMaxLife = 24 * time.Hour
	// CloudTTL is the time to live a cloud sandbox is created with, and what each
	// extension brings it back to (from now) while its session is open.
	CloudTTL = time.Hour
	// OnTimeoutStop: at the end of its time to live the sandbox stops (never deleted), so
	// that work not yet landed survives and can be collected.
	OnTimeoutStop = "stop"
)

// ErrQuota: the account has as many cloud sandboxes as it may (10 running at once), and
// sbx refused another.
var ErrQuota = errors.New("the Docker account's cloud sandbox quota is used up (10 at once): " +
	"remove one (sbx --cloud ls; sbx --cloud rm NAME) or land and discard a session's work, then retry")

// quotaRE matches sbx's refusal of a sandbox over the account's quota, on a line it
// prefixed as its error.
var quotaRE = regexp.MustCompile(`(?mi)^(?:error:\s*)?.*\b(?:quota|limit of \d+ (?:concurrent|running) sandboxes|too many (?:cloud )?sandboxes)\b`)

// CloudOpts are a cloud sandbox's create options.
type CloudOpts struct {
	Size      string        // one of CloudSizes; "" is sbx's default
	TTL       time.Duration // 0: CloudTTL
	OnTimeout string        // "": OnTimeoutStop
}

func (o CloudOpts) args() ([]string, error) {
	var args []string
	if o.Size != "" {
		if !ValidCloudSize(o.Size) {
			return nil, fmt.Errorf("cloud size %q: want %s", o.Size, strings.Join(CloudSizes, ", "))
		}
		args = append(args, "--size", o.Size)
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = CloudTTL
	}
	if ttl < time.Minute || ttl > CloudMaxLife {
		return nil, fmt.Errorf("cloud time to live %s: want 1m to 24h", ttl)
	}
	onTimeout := o.OnTimeout
	if onTimeout == "" {
		onTimeout = OnTimeoutStop
	}
	return append(args, "--ttl", Minutes(ttl), "--on-timeout", onTimeout), nil
}

// ValidCloudSize reports whether size is one of CloudSizes.
func ValidCloudSize(size string) bool {
	for _, s := range CloudSizes {
		if size == s {
			return true
		}
	}
	return false
}

// Minutes spells d as sbx's durations: whole minutes ("90m"), at least one.
func Minutes(d time.Duration) string {
	m := int(d / time.Minute)
	if m < 1 {
		m = 1
	}
	return fmt.Sprintf("%dm", m)
}

// InCloud returns a client like c whose every call carries --cloud.
func (c *Client) InCloud() *Client {
	cc := c.Clone()
	cc.Cloud = true
	return cc
}

// ValidateCloudName checks a cloud sandbox's name: sbx's rules, without periods.
func ValidateCloudName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if strings.Contains(name, ".") {
		return fmt.Errorf("%w %q: a cloud sandbox's name has no periods", ErrBadName, name)
	}
	return nil
}

// CloudName makes a local name a cloud one: periods become dashes.
func CloudName(name string) string { return strings.ReplaceAll(name, ".", "-") }

func (c *Client) validateName(name string) error {
	if c.Cloud {
		return ValidateCloudName(name)
	}
	return ValidateName(name)
}

// cloudCheck refuses, before sbx runs, a cloud command line with a flag cloud sandboxes
// reject (the contract's Local flags: exec -d, -u, --privileged).
func (c *Client) cloudCheck(op, sandbox string, args []string) error {
	if !c.Cloud {
		return nil
	}
	if f := CloudRejects(args); f != "" {
		return &Error{Op: op, Sandbox: sandbox, ExitCode: -1, Err: fmt.Errorf("%w: %s is rejected by cloud sandboxes", ErrFailed, f)}
	}
	return nil
}

// CheckCloud fails unless the installed sbx has --cloud.
func (c *Client) CheckCloud(ctx context.Context) error {
	v, err := c.Versions(ctx)
	if err != nil {
		return err
	}
	if !SupportsGlobal(v.Client, "cloud") {
		return fmt.Errorf("%w for cloud sandboxes: sbx v%s, --cloud needs v%s or newer", ErrTooOld, strings.TrimPrefix(v.Client, "v"), CloudSince)
	}
	return nil
}

// ExtendTTL extends a cloud sandbox's time to live by d (`sbx --cloud ttl NAME +Nm`).
func (c *Client) ExtendTTL(ctx context.Context, name string, d time.Duration) error {
	if !c.Cloud {
		return errors.New("sbx ttl: only cloud sandboxes have a time to live")
	}
	if err := ValidateCloudName(name); err != nil {
		return err
	}
	_, err := c.run(ctx, call{op: "ttl", sandbox: name, args: []string{"ttl", name, "+" + Minutes(d)}})
	return err
}
