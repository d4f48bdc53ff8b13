//go:build linux && (amd64 || arm64)

package repair

import (
	"os"
	"syscall"
)

// startWriteback asks the kernel to start writing a range of f to disk now
// (sync_file_range with SYNC_FILE_RANGE_WRITE: it does not wait), so the
// fsync before the rename finds little left to do.
func startWriteback(f *os.File, off, n int64) {
	const syncFileRangeWrite = 2
	syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, f.Fd(), uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
}
