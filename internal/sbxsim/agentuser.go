//go:build linux

package sbxsim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sudoPath is where the sandbox's sudo is: first on the default PATH.
const sudoPath = "/usr/local/bin/sudo"

// addAgentUser adds agent (and its groups sudo and docker) to the sandbox's private
// /etc/passwd and /etc/group, replacing any copied entry with the same name or id.
func addAgentUser(etc string) error {
	shell := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "/bin/bash"
	}
	passwd := fmt.Sprintf("agent:x:%d:%d:agent:%s:%s", AgentUID, AgentGID, AgentHome, shell)
	if err := rewriteIDFile(filepath.Join(etc, "passwd"), 2, map[string]bool{"agent": true},
		map[int]bool{AgentUID: true}, passwd); err != nil {
		return err
	}
	return rewriteIDFile(filepath.Join(etc, "group"), 2,
		map[string]bool{"agent": true, "sudo": true, "docker": true},
		map[int]bool{AgentGID: true, sudoGID: true, dockerGID: true},
		fmt.Sprintf("agent:x:%d:", AgentGID), fmt.Sprintf("sudo:x:%d:agent", sudoGID),
		fmt.Sprintf("docker:x:%d:agent", dockerGID))
}

// rewriteIDFile drops the lines of a passwd-format file whose name (field 0) or id
// (field idField) is taken, and appends add.
func rewriteIDFile(path string, idField int, names map[string]bool, ids map[int]bool, add ...string) error {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Split(l, ":")
		if l == "" || names[f[0]] {
			continue
		}
		if len(f) > idField {
			if id, err := strconv.Atoi(f[idField]); err == nil && ids[id] {
				continue
			}
		}
		out = append(out, l)
	}
	out = append(out, add...)
	return os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
}

// persistentDirs makes the host directories behind a sandbox's /tmp and /home/agent.
// Real sbx keeps the VM's disk across a stop (the template's root file system, which
// has no tmpfs on /tmp), so a stop loses processes, not files.
func (m *Manager) persistentDirs(name string) (tmp, home string, err error) {
	tmp = filepath.Join(m.Store.dir(name), "tmp")
	home = filepath.Join(m.Store.dir(name), "home")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", "", err
	}
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", "", err
	}
	return tmp, home, os.Chown(home, AgentUID, AgentGID)
}

// prepareSudo copies sbxsim into the sandbox's state directory as a setuid-root
// program: the sandbox's sudo (RunSudo). A copy is made at each start, so it is
// always the sbxsim of the start; the state directory is root's alone (0700).
func (m *Manager) prepareSudo(name string) (string, error) {
	dst := filepath.Join(m.Store.dir(name), "sudo")
	src, err := os.Open(m.Self)
	if err != nil {
		return "", fmt.Errorf("making sudo: %w", err)
	}
	defer src.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o700)
	if err != nil {
		return "", fmt.Errorf("making sudo: %w", err)
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return "", fmt.Errorf("making sudo: %w", err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("making sudo: %w", err)
	}
	if err := os.Chown(tmp, 0, 0); err != nil {
		return "", fmt.Errorf("making sudo: %w", err)
	}
	if err := os.Chmod(tmp, 0o755|os.ModeSetuid); err != nil {
		return "", fmt.Errorf("making sudo: %w", err)
	}
	return dst, os.Rename(tmp, dst)
}
