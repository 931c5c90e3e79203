//go:build unix

package sbx

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecRunnerProcessGroup: sbx gets a process group of its own (so cancellation kills
// its helpers too), except in the foreground, where it must read the user's terminal.
func TestExecRunnerProcessGroup(t *testing.T) {
	ours, err := syscall.Getpgid(0)
	require.NoError(t, err)
	for _, foreground := range []bool{false, true} {
		var out bytes.Buffer
		// The shell prints its pid and its process group (field 5 of /proc/self/stat).
		p, err := ExecRunner{}.Start(context.Background(), "/bin/sh", Cmd{
			Args:       []string{"-c", `read -r pid _ _ _ pgrp _ < /proc/self/stat; echo $$ $pgrp`},
			Env:        []string{"PATH=" + os.Getenv("PATH")},
			Stdout:     &out,
			Foreground: foreground,
		})
		require.NoError(t, err)
		code, err := p.Wait()
		require.NoError(t, err)
		require.Zero(t, code)
		f := strings.Fields(out.String())
		require.Len(t, f, 2, out.String())
		pid, _ := strconv.Atoi(f[0])
		pgrp, _ := strconv.Atoi(f[1])
		if foreground {
			assert.Equal(t, ours, pgrp, "foreground: the caller's group")
		} else {
			assert.Equal(t, pid, pgrp, "background: a group of its own")
		}
	}
}
