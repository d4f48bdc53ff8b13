//go:build unix

package artifacts

import (
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/rollout-dev/rollout/internal/edit/outfile"
)

func sameDevice(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && sameDeviceInfo(fa, fb)
}

func sameDeviceInfo(fa, fb os.FileInfo) bool {
	sa, ok1 := fa.Sys().(*syscall.Stat_t)
	sb, ok2 := fb.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

// giveTo gives a directory root made to the owner of the home it is in, so
// that the user can read and clean up the store (best effort: only root
// may give files away).
func giveTo(dir *outfile.Dir, home os.FileInfo) {
	if st, ok := home.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		dir.Chown(int(st.Uid), int(st.Gid))
	}
}

// checkOwner refuses (*OwnerError) a store directory that belongs to
// someone other than root, the home's owner or this process, or that its
// group or others may write.
func checkOwner(dir *outfile.Dir, home os.FileInfo) error {
	fi, err := dir.Stat()
	if err != nil {
		return err
	}
	st, ok1 := fi.Sys().(*syscall.Stat_t)
	hst, ok2 := home.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return nil
	}
	uid := int(st.Uid)
	trusted := uid == 0 || uid == int(hst.Uid) || uid == os.Geteuid()
	if trusted && fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	e := &OwnerError{Dir: dir.Name(), UID: uid, Mode: fi.Mode(), HomeUID: int(hst.Uid), Foreign: !trusted}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		e.Owner = u.Username
	}
	return e
}
