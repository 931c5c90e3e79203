//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package shell

import "os"

// fionread is FIONREAD, _IOR('f', 127, int), which x/sys/unix does not name on BSDs.
const fionread = 0x4004667f

// growPipe does nothing: pipes here cannot be enlarged.
func growPipe(*os.File) {}
