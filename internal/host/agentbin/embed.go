//go:build embedagents

package agentbin

import (
	"embed"
	"io/fs"
)

// The agents `make release` compresses into agents/ before building a host with the tag.
//
//go:embed agents/linux-amd64.gz agents/linux-arm64.gz
var agents embed.FS

// Embedded returns the agents this build carries: linux-<arch>.gz for each of Archs().
func Embedded() fs.FS {
	sub, err := fs.Sub(agents, "agents")
	if err != nil {
		panic(err) // "agents" is a valid path: cannot happen
	}
	return sub
}
