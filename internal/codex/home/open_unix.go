//go:build unix

package home

import (
	"fmt"
	"os"
	"syscall"
)

// openRegular opens a file of the home for reading only when it is a
// regular file: opened without blocking (a FIFO's open waits for a
// writer, its read for data, for ever), then checked on the descriptor.
func openRegular(path string) (*os.File, error) {
	return openRegularFlags(path, os.O_RDONLY, 0)
}

// openRegularFlags is openRegular with other open flags (the maintenance
// lock is created read-write).
func openRegularFlags(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
