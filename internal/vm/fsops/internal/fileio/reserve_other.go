//go:build !linux

package fileio

import (
	"errors"
	"os"
)

// reserve is not available here: writes take their chances, as pi's do.
func reserve(*os.File, int64) error { return errors.ErrUnsupported }
