//go:build unix

package home

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Locks says whether this system has the advisory locks Codex uses: Rust's
// File::try_lock is flock(2) on Linux, the BSDs and Apple systems.
const Locks = true

// flock applies how to f without waiting: false when another holder has it.
func flock(f *os.File, how int) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), how|syscall.LOCK_NB)
			if !errors.Is(lerr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return lerr == nil, lerr
}

// tryLock takes an exclusive lock on f without waiting; it is released
// when f is closed.
func tryLock(f *os.File) (bool, error) { return flock(f, syscall.LOCK_EX) }

// probe reports whether another holder has a lock on f: it takes and at
// once drops an exclusive lock.
func probe(f *os.File) (held bool, err error) {
	got, err := flock(f, syscall.LOCK_EX)
	if err != nil {
		return false, err
	}
	if got {
		flock(f, syscall.LOCK_UN)
		return false, nil
	}
	return true, nil
}

// lockShortly takes an exclusive lock on f, trying for up to 200 ms.
func lockShortly(f *os.File) bool {
	for range 20 {
		if ok, err := tryLock(f); ok || err != nil {
			return ok
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// alive reports whether a process with this pid runs (EPERM: it runs,
// under another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
