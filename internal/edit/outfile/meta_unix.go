//go:build unix

package outfile

import (
	"errors"
	"os"
	"syscall"
)

// chown gives f the owner and group of src; it fails (ignored) unless the
// process may give files away.
func chown(f *os.File, src os.FileInfo) {
	if st, ok := src.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
