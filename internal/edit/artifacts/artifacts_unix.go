//go:build unix

package artifacts

import (
	"os"
	"syscall"
)

func sameDevice(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return false
	}
	sa, ok1 := fa.Sys().(*syscall.Stat_t)
	sb, ok2 := fb.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

// giveTo gives a directory root made to the owner of the home it is in, so
// that the user can read and clean up the store (best effort: only root
// may give files away).
func giveTo(dir string, home os.FileInfo) {
	if st, ok := home.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		os.Lchown(dir, int(st.Uid), int(st.Gid))
	}
}
