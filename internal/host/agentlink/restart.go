package agentlink

import "errors"

// Real sbx stops a sandbox when told to (sbx stop), when its daemon restarts and when
// the host reboots; the keep-alive session (lifecycle.Session.KeepAlive) only prevents the
// auto-stop. A stop ends the agent and with it the channel: the next call opens a new
// channel with `sbx exec`, which starts the sandbox again, and installs the agent again
// by hash if the VM lost it (Installer.Forget after a failed start, then a new probe).
//
// A call in flight when the channel ends may or may not have run; only calls that
// change nothing are run again on the new channel, so that a stop is invisible to
// them. bash, write and edit fail with ErrAgentDied (the next call restarts the
// channel).

// rerunnable reports whether running the tool twice is the same as running it once.
func rerunnable(tool string) bool {
	switch tool {
	case "read", "ls", "grep", "find":
		return true
	}
	return false
}

// errOutputEnded marks an ErrAgentDied whose agent's output ended by itself (the agent
// died, as in a stop), not one whose connection was cut for a reply it refused. Its
// text is empty: it only marks.
var errOutputEnded = errors.New("")
