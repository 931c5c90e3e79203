//go:build linux

package sbxsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path"
	"runtime"
	"strconv"
	"strings"
)

var execFlags = []flagSpec{
	{long: "interactive", short: "i"},
	{long: "tty", short: "t"},
	{long: "env", short: "e", value: true},
	{long: "env-file", value: true},
	{long: "user", short: "u", value: true},
	{long: "workdir", short: "w", value: true},
	{long: "detach", short: "d"},
	{long: "privileged"},
}

// errDetach is sbx's (≥ 0.45) refusal of exec -d.
var errDetach = errors.New("--detach is not supported for exec; omit -d to run the command in the foreground")

// execRequest is a parsed exec command line.
type execRequest struct {
	name        string
	argv        []string
	env         []string
	user        string
	workdir     string
	interactive bool
	tty         bool
	privileged  bool
}

func (c *cli) parseExec(args []string) (execRequest, error) {
	fs, err := parseFlags(c.flagsOf("exec"), args, false)
	if err != nil {
		return execRequest{}, err
	}
	if fs.has("detach") {
		return execRequest{}, errDetach
	}
	if err := argCount("exec", fs.args, 2); err != nil {
		return execRequest{}, err
	}
	r := execRequest{name: fs.args[0], argv: fs.args[1:], user: fs.last("user"), workdir: fs.last("workdir"),
		interactive: fs.has("interactive"), tty: fs.has("tty"), privileged: fs.has("privileged")}
	if r.workdir != "" && !path.IsAbs(r.workdir) {
		return r, fmt.Errorf("the working directory %q is not an absolute path", r.workdir)
	}
	if r.argv[0] == "--" {
		r.argv = r.argv[1:]
	}
	if len(r.argv) == 0 {
		return r, errors.New("\"sbx exec\" requires a command to run")
	}
	var vars []string
	for _, f := range fs.values["env-file"] {
		v, err := readEnvFile(f)
		if err != nil {
			return r, err
		}
		vars = append(vars, v...)
	}
	vars = append(vars, fs.values["env"]...)
	for _, v := range vars {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			// docker's `-e K`: the caller's value, if it has one.
			if val, ok = c.env.LookupEnv(k); !ok {
				continue
			}
		}
		if k == "" {
			return r, fmt.Errorf("invalid environment variable %q", v)
		}
		r.env = setEnv(r.env, k, val)
	}
	return r, nil
}

// readEnvFile reads docker's env-file format: K=V or K per line, # comments.
func readEnvFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading env file: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out, sc.Err()
}

// setEnv sets k=v in env, replacing an earlier value.
func setEnv(env []string, k, v string) []string {
	for i, e := range env {
		if strings.HasPrefix(e, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

// credentials resolves -u's <name|uid>[:<group|gid>] against the host's /etc/passwd
// and /etc/group (the sandbox's is a copy of it, plus agent); "" and "agent" are agent,
// as in real sbx.
func credentials(spec string) (uid, gid int, home string, err error) {
	switch spec {
	case "", "agent", strconv.Itoa(AgentUID):
		return AgentUID, AgentGID, AgentHome, nil
	case "root", "0":
		return 0, 0, "/root", nil
	}
	us, gs, hasGroup := strings.Cut(spec, ":")
	u, err := user.Lookup(us)
	if err != nil {
		u, err = user.LookupId(us)
	}
	home = "/"
	if err == nil {
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		home = u.HomeDir
	} else if uid, err = strconv.Atoi(us); err != nil {
		return 0, 0, "", fmt.Errorf("unable to find user %s: no matching entries in passwd file", us)
	} else {
		gid = uid
	}
	if hasGroup {
		g, err := user.LookupGroup(gs)
		if err == nil {
			gid, _ = strconv.Atoi(g.Gid)
		} else if gid, err = strconv.Atoi(gs); err != nil {
			return 0, 0, "", fmt.Errorf("unable to find group %s: no matching entries in group file", gs)
		}
	}
	return uid, gid, home, nil
}

// keptCaps are the capabilities an exec'd command may have: Docker's default set for
// containers without mknod (no device nodes of the host's disks). Gone are those that
// could undo the sandbox — sys_admin (mount, umount, setns), sys_module, sys_ptrace
// (the sandbox's dockerd and init keep their full set), sys_rawio, dac_read_search
// (open_by_handle_at), net_admin, sys_boot, sys_time, bpf and the rest.
const keptCaps = "chown,dac_override,fowner,fsetid,kill,setgid,setuid,setpcap,net_bind_service,net_raw,sys_chroot,audit_write,setfcap"

// dropPrivileges is the setpriv command line, run inside the sandbox (the host's
// setpriv, through the read-only /usr), that execs the command as uid:gid with the
// capability bounding set cut to keptCaps — so that neither root, sudo nor a
// file-capability program can regain the others. agent is in its groups sudo and
// docker (the daemon's socket); any other user has no other groups.
func dropPrivileges(setpriv string, uid, gid int, agent bool) []string {
	bounding := "-all"
	for _, c := range strings.Split(keptCaps, ",") {
		bounding += ",+" + c
	}
	groups := "--clear-groups"
	if agent {
		groups = fmt.Sprintf("--groups=%d,%d,%d", AgentGID, sudoGID, dockerGID)
	}
	return []string{setpriv, "--bounding-set=" + bounding, "--inh-caps=-all",
		"--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), groups, "--"}
}

// extendedPrivileges is exec --privileged's setpriv: the user's ids with the full
// capability set kept (docker exec --privileged), so that root can mount in the
// sandbox's mount namespace, as root in the VM can.
func extendedPrivileges(setpriv string, uid, gid int, agent bool) []string {
	groups := "--clear-groups"
	if agent {
		groups = fmt.Sprintf("--groups=%d,%d,%d", AgentGID, sudoGID, dockerGID)
	}
	return []string{setpriv, "--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), groups, "--"}
}

func (c *cli) exec(ctx context.Context, args []string) error {
	r, err := c.parseExec(args)
	if err != nil {
		return err
	}
	sess, err := c.m.Store.openSession(ctx, r.name)
	if err != nil {
		return err
	}
	defer func() {
		if sb, err := c.m.Store.Load(r.name); err == nil {
			if err := c.m.armAutoStop(ctx, sb); err != nil {
				fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
			}
		}
		// The session ends when this process does: the kernel closes its stdout before
		// the sessions file (a higher descriptor), so once a stop has seen every session
		// end (waitSessionsEnded), each client's output has ended too.
		runtime.KeepAlive(sess)
	}()
	sb, err := c.m.ensureRunning(ctx, r.name)
	if err != nil {
		return err
	}
	uid, gid, home, err := credentials(r.user)
	if err != nil {
		return err
	}
	agent := uid == AgentUID
	if agent && sb.RunAs != nil {
		uid, gid = sb.RunAs.UID, sb.RunAs.GID // no idmapped workspace here
	}
	// Only what the caller passed with -e/--env-file reaches the command, on top of the
	// sandbox's own defaults: never the caller's environment.
	env := []string{"PATH=" + defaultPath, "HOME=" + home}
	if c.m.Store.Settings()[sshForwarding] == "true" {
		// sbx forwards the host's SSH agent by default: a process inside can ask it
		// to sign. sbxsim forwards the socket its creator had (see sshAgentSocket).
		env = append(env, "SSH_AUTH_SOCK="+sshAgentPath)
	}
	if r.tty {
		env = append(env, "TERM=xterm-256color")
	}
	for _, kv := range r.env {
		k, v, _ := strings.Cut(kv, "=")
		env = setEnv(env, k, v)
	}
	wd := r.workdir
	if wd == "" {
		wd = sb.Primary()
	}
	if wd == "" {
		wd = home
	}
	nsenter, err := lookTool("nsenter")
	if err != nil {
		return err
	}
	setpriv, err := lookTool("setpriv")
	if err != nil {
		return err
	}
	argv := []string{"nsenter", "--target", strconv.Itoa(sb.Init.Pid),
		"--mount", "--uts", "--ipc", "--net", "--pid", "--wdns=" + wd, "--"}
	drop := dropPrivileges(setpriv, uid, gid, agent)
	if r.privileged {
		drop = extendedPrivileges(setpriv, uid, gid, agent)
	}
	argv = append(append(argv, drop...), r.argv...)
	if r.tty {
		return c.execPty(ctx, sb.Init.Pid, nsenter, argv, env, r.interactive)
	}
	// nsenter forks the command into the sandbox's PID namespace and passes its status
	// on, but dies of the command's signal: waiting for it here (one clone, well under a
	// millisecond) turns that into docker's 128+n instead of a killed sbx client.
	cmd := exec.CommandContext(ctx, nsenter, argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = c.env.Stdout, c.env.Stderr
	if r.interactive && c.env.Stdin != nil {
		cmd.Stdin = c.env.Stdin
	} // else /dev/null: without -i the command gets no input, as with docker exec
	return exitStatus(cmd.Run())
}
