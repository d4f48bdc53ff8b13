package outfile

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"
)

// copyXattrs copies the extended attributes of src to dst, best effort:
// attributes the process may not set (security.*, trusted.*) are skipped.
func copyXattrs(src string, dst *os.File) {
	size, err := unix.Listxattr(src, nil)
	if err != nil || size <= 0 {
		return
	}
	list := make([]byte, size)
	if size, err = unix.Listxattr(src, list); err != nil {
		return
	}
	rc, err := dst.SyscallConn()
	if err != nil {
		return
	}
	for name := range bytes.SplitSeq(list[:size], []byte{0}) {
		if len(name) == 0 {
			continue
		}
		attr := string(name)
		n, err := unix.Getxattr(src, attr, nil)
		if err != nil {
			continue
		}
		val := make([]byte, n)
		if n, err = unix.Getxattr(src, attr, val); err != nil {
			continue
		}
		rc.Control(func(fd uintptr) { unix.Fsetxattr(int(fd), attr, val[:n], 0) })
	}
}
