//go:build !unix

package mcpserver

import "os"

// readerGone is never closed here: without poll(2) a vanished client is noticed at the
// next write.
func readerGone(*os.File, <-chan struct{}) <-chan struct{} { return nil }
