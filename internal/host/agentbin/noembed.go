//go:build !embedagents

package agentbin

import "io/fs"

// Embedded returns the agents this build carries: none, without the embedagents tag.
func Embedded() fs.FS { return nil }
