package fsops

import "github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"

// NodeError is a file-system failure worded as Node.js words it (see fileio.NodeError):
// the tools return it where pi throws Node's error unchanged.
type NodeError = fileio.NodeError
