//go:build linux

package sbxsim

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// securePath is Debian sudoers' secure_path: every command sudo runs gets it.
const securePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// sudoRequest is a parsed sudo command line.
type sudoRequest struct {
	user     string // -u; "" = root
	keepEnv  bool   // -E
	login    bool   // -i
	shell    bool   // -s
	listOnly bool   // -l, -v: nothing to run
	command  []string
}

// parseSudo reads the options of sudo that agents use; anything else is refused as
// sudo refuses an unknown option.
func parseSudo(args []string) (sudoRequest, error) {
	var r sudoRequest
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			r.command = args[i+1:]
			return r, nil
		case a == "--preserve-env" || strings.HasPrefix(a, "--preserve-env="):
			r.keepEnv = true
		case a == "--non-interactive", a == "--set-home", a == "--stdin", a == "--reset-timestamp":
		case a == "--login":
			r.login = true
		case a == "--shell":
			r.shell = true
		case a == "--user":
			if i+1 >= len(args) {
				return r, fmt.Errorf("option requires an argument -- 'u'")
			}
			i++
			r.user = args[i]
		case strings.HasPrefix(a, "--user="):
			r.user = strings.TrimPrefix(a, "--user=")
		case strings.HasPrefix(a, "--"):
			return r, fmt.Errorf("unrecognized option '%s'", a)
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'n', 'H', 'S', 'k', 'b':
				case 'E':
					r.keepEnv = true
				case 'i':
					r.login = true
				case 's':
					r.shell = true
				case 'l', 'v':
					r.listOnly = true
				case 'u':
					switch {
					case j+1 < len(a):
						r.user = a[j+1:]
					case i+1 < len(args):
						i++
						r.user = args[i]
					default:
						return r, fmt.Errorf("option requires an argument -- 'u'")
					}
					j = len(a)
				default:
					return r, fmt.Errorf("invalid option -- '%c'", a[j])
				}
			}
		default:
			r.command = args[i:]
			return r, nil
		}
	}
	return r, nil
}

// RunSudo is the sandbox's sudo (sbxsim run as "sudo", setuid root): passwordless, as
// real sbx gives agent. It runs the command as root (or -u USER) with sudo's reset
// environment (-E keeps the caller's), or a shell for -s/-i.
func RunSudo(args []string, environ []string, stderr io.Writer) int {
	r, err := parseSudo(args)
	if err != nil {
		fmt.Fprintf(stderr, "sudo: %v\nusage: sudo [-EHnS] [-u user] [-i|-s] [command [arg ...]]\n", err)
		return 1
	}
	if os.Geteuid() != 0 {
		fmt.Fprintf(stderr, "sudo: effective uid is not 0, is %s on a file system with the 'nosuid' option set?\n", sudoPath)
		return 1
	}
	if r.listOnly {
		if len(r.command) == 0 {
			fmt.Fprintln(os.Stdout, "User agent may run the following commands:\n    (ALL : ALL) NOPASSWD: ALL")
		}
		return 0
	}
	target, err := sudoTarget(r.user)
	if err != nil {
		fmt.Fprintf(stderr, "sudo: %v\n", err)
		return 1
	}
	argv := r.command
	if r.login || r.shell {
		sh := target.shell
		if r.shell && !r.login {
			if v := lookup(environ, "SHELL"); v != "" {
				sh = v
			}
		}
		shArgv := []string{sh}
		if r.login {
			shArgv = append(shArgv, "-l")
		}
		if len(argv) > 0 {
			shArgv = append(shArgv, "-c", strings.Join(argv, " "))
		}
		argv = shArgv
	}
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "usage: sudo [-EHnS] [-u user] [-i|-s] [command [arg ...]]")
		return 1
	}
	env := sudoEnv(environ, target, r.keepEnv, argv)
	bin := argv[0]
	if !strings.Contains(bin, "/") {
		os.Setenv("PATH", securePath)
		if bin, err = exec.LookPath(argv[0]); err != nil {
			fmt.Fprintf(stderr, "sudo: %s: command not found\n", argv[0])
			return 1
		}
	}
	if err := becomeUser(target); err != nil {
		fmt.Fprintf(stderr, "sudo: %v\n", err)
		return 1
	}
	err = syscall.Exec(bin, argv, env)
	fmt.Fprintf(stderr, "sudo: %s: %v\n", argv[0], err)
	return 1
}

// sudoUser is the user sudo runs the command as.
type sudoUser struct {
	name, home, shell string
	uid, gid          int
	groups            []int
}

func sudoTarget(spec string) (sudoUser, error) {
	if spec == "" {
		spec = "root"
	}
	var u *user.User
	var err error
	if id, ok := strings.CutPrefix(spec, "#"); ok {
		u, err = user.LookupId(id)
	} else {
		u, err = user.Lookup(spec)
	}
	if err != nil {
		return sudoUser{}, fmt.Errorf("unknown user %s", spec)
	}
	t := sudoUser{name: u.Username, home: u.HomeDir, shell: "/bin/sh"}
	t.uid, _ = strconv.Atoi(u.Uid)
	t.gid, _ = strconv.Atoi(u.Gid)
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.Atoi(g); err == nil {
				t.groups = append(t.groups, n)
			}
		}
	}
	if len(t.groups) == 0 {
		t.groups = []int{t.gid}
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		t.shell = "/bin/bash"
	}
	return t, nil
}

// sudoEnv is sudo's env_reset: the terminal's variables, the target's identity and
// secure_path; -E keeps everything else too.
func sudoEnv(environ []string, t sudoUser, keep bool, argv []string) []string {
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GOTRACEBACK": // the Go runtime sets it in a setuid program
		case keep && k != "PATH":
			env = append(env, kv)
		case k == "TERM" || k == "COLORTERM" || k == "LANG" || strings.HasPrefix(k, "LC_"):
			env = append(env, kv)
		}
	}
	caller, _ := user.LookupId(strconv.Itoa(os.Getuid()))
	callerName := strconv.Itoa(os.Getuid())
	if caller != nil {
		callerName = caller.Username
	}
	for _, kv := range []string{"PATH=" + securePath, "HOME=" + t.home, "USER=" + t.name, "LOGNAME=" + t.name,
		"SHELL=" + t.shell, "SUDO_USER=" + callerName, "SUDO_UID=" + strconv.Itoa(os.Getuid()),
		"SUDO_GID=" + strconv.Itoa(os.Getgid()), "SUDO_COMMAND=" + strings.Join(argv, " ")} {
		env = setEnv(env, strings.SplitN(kv, "=", 2)[0], strings.SplitN(kv, "=", 2)[1])
	}
	return env
}

// becomeUser sets every id of every thread (syscall's, not x/sys/unix's per-thread ones).
func becomeUser(t sudoUser) error {
	if err := syscall.Setgroups(t.groups); err != nil {
		return fmt.Errorf("setting groups: %w", err)
	}
	if err := syscall.Setresgid(t.gid, t.gid, t.gid); err != nil {
		return fmt.Errorf("setting gid %d: %w", t.gid, err)
	}
	if err := syscall.Setresuid(t.uid, t.uid, t.uid); err != nil {
		return fmt.Errorf("setting uid %d: %w", t.uid, err)
	}
	return nil
}

func lookup(environ []string, k string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}
