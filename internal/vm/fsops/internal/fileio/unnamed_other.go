//go:build !linux

package fileio

import (
	"errors"
	"os"
)

func openUnnamed(string) (*os.File, error) { return nil, errors.ErrUnsupported }

func nameUnnamed(*os.File, string) error { return errNoName }
