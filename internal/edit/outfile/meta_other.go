//go:build !unix

package outfile

import "os"

func chown(*os.File, os.FileInfo) {}

// openNoFollow cannot refuse a symlink atomically here: it checks first.
func openNoFollow(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, errSymlink
	}
	return os.Open(path)
}

var errSymlink = &os.PathError{Op: "open", Err: os.ErrInvalid}

func isSymlinkErr(err error) bool { return err == errSymlink }

func clearNonblock(*os.File) error { return nil }
