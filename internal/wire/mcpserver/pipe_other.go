//go:build !linux

package mcpserver

import "os"

// GrowPipe does nothing: pipes here cannot be enlarged.
func GrowPipe(*os.File) {}
