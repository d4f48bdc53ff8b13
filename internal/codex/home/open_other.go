//go:build !unix

package home

import (
	"fmt"
	"os"
)

// openRegular opens a file of the home for reading only when it is a
// regular file.
func openRegular(path string) (*os.File, error) {
	return openRegularFlags(path, os.O_RDONLY, 0)
}

// openRegularFlags is openRegular with other open flags.
func openRegularFlags(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	return os.OpenFile(path, flag, perm)
}
