//go:build linux

package main

// localCommands are the commands that run tools or programs on this machine: the in-VM
// half (agent, which serve starts in the linux VM) and exec, the local debugging aid.
// They link shell/ and fsops/, and exist in linux builds only; the host side (serve,
// shell, tool --sandbox) builds everywhere sbx runs.
func localCommands() []command {
	return []command{execCommand(), agentCommand(), terminalServerCommand()}
}
