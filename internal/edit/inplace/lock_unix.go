//go:build unix

package inplace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// errLocked: another process holds the lock.
var errLocked = errors.New("locked")

// lock takes an exclusive advisory lock on f without waiting; it is
// released when f is closed.
func lock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if !errors.Is(lerr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return lerr
}

// Links is the number of names of the file fi describes.
func Links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// Owner is the owner and group of the file fi describes (-1: unknown).
func Owner(fi os.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// Replaceable refuses, before anything is made, a file whose directory
// will not let this process rename another file over it: a directory it
// cannot write, or a sticky one (like /tmp) where the file and the
// directory belong to others. The rename would fail after the backup and
// the quarantine were in place, and in a sticky directory a backup linked
// to another user's file could not even be removed again.
func Replaceable(path string, fi os.FileInfo) error {
	dir := filepath.Dir(path)
	if err := syscall.Access(dir, 2|1); err != nil { // W_OK|X_OK
		return fmt.Errorf("%w: %s cannot be replaced: its directory is not writable (%w)", ErrWriteFailed, path, err)
	}
	dfi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWriteFailed, err)
	}
	euid := os.Geteuid()
	fuid, _ := Owner(fi)
	duid, _ := Owner(dfi)
	if dfi.Mode()&os.ModeSticky != 0 && euid != 0 && euid != fuid && euid != duid {
		return fmt.Errorf("%w: %s cannot be replaced: %s is a sticky directory, where only the owner of a file (uid %d), of the directory or root may replace it", ErrWriteFailed, path, dir, fuid)
	}
	return nil
}
