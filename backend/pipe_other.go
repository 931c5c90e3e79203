//go:build !linux

package backend

import "os"

// GrowPipe does nothing: pipes here cannot be enlarged.
func GrowPipe(*os.File) {}
