//go:build unix

package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is a directory held open: its entries are made, renamed and removed
// relative to it (openat, linkat, renameat, unlinkat), never through a
// path another user could change between a check and the use. A Dir opened
// by Sub keeps its parent open (Close closes both), so that the directory
// itself can be removed relative to the parent that was checked.
type Dir struct {
	f      *os.File
	name   string // the path it was opened as, for messages
	parent *Dir   // nil for a directory opened by path
	base   string // its name in parent
}

// OpenDir opens the directory at path (following symlinks: the caller
// named it).
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), name: path}, nil
}

// Sub opens the directory name in d without following a symlink: a
// symlink or anything else that is not a directory is an *UnsafeError.
// The result owns d: closing it closes d.
func (d *Dir) Sub(name string) (*Dir, error) {
	path := d.Join(name)
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			if kind, kerr := d.kind(name); kerr == nil {
				return nil, &UnsafeError{Path: path, Kind: kind}
			}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), name: path, parent: d, base: name}, nil
}

// Mkdir makes the directory name in d.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if err := unix.Mkdirat(d.fd(), name, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: d.Join(name), Err: err}
	}
	return nil
}

func (d *Dir) fd() int { return int(d.f.Fd()) }

// Name is the path d was opened as.
func (d *Dir) Name() string { return d.name }

// Join names an entry of d, for messages (never to reach it).
func (d *Dir) Join(name string) string { return filepath.Join(d.name, name) }

// Parent is the directory d was opened in by Sub (nil when by path).
func (d *Dir) Parent() *Dir { return d.parent }

// Stat describes d itself.
func (d *Dir) Stat() (os.FileInfo, error) { return d.f.Stat() }

// OpenFile opens the entry name of d, never following a symlink there
// (a symlink is an *UnsafeError).
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, &UnsafeError{Path: d.Join(name), Kind: "symbolic link"}
		}
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// OpenExisting is OpenExisting for the entry name of d.
func (d *Dir) OpenExisting(name string) (*os.File, error) {
	f, err := d.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return checkRegular(f, d.Join(name))
}

// CheckRegularOrAbsent is CheckRegularOrAbsent for the entry name of d.
func (d *Dir) CheckRegularOrAbsent(name string) error {
	kind, err := d.kind(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case kind != "":
		return &UnsafeError{Path: d.Join(name), Kind: kind}
	}
	return nil
}

// Absent reports whether d has no entry name, not even a dangling symlink.
func (d *Dir) Absent(name string) bool {
	_, err := d.kind(name)
	return errors.Is(err, fs.ErrNotExist)
}

// kind is what the entry name is, without following it: "" for a regular
// file, else as kindOf says.
func (d *Dir) kind(name string) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", &fs.PathError{Op: "lstat", Path: d.Join(name), Err: err}
	}
	var m fs.FileMode
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "", nil
	case unix.S_IFLNK:
		m = fs.ModeSymlink
	case unix.S_IFDIR:
		m = fs.ModeDir
	case unix.S_IFIFO:
		m = fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m = fs.ModeSocket
	case unix.S_IFCHR:
		m = fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m = fs.ModeDevice
	default:
		m = fs.ModeIrregular
	}
	return kindOf(m), nil
}

// Link makes name in d a hard link of the file f has open: of that very
// inode (through /proc/self/fd on Linux), not of whatever its path names
// by then. Elsewhere it links f's name.
func (d *Dir) Link(f *os.File, name string) error {
	err := linkOpen(f, d.fd(), name)
	if err != nil {
		return &fs.PathError{Op: "link", Path: d.Join(name), Err: err}
	}
	return nil
}

// linkOpen links the inode f has open, by its /proc/self/fd magic link
// when there is one (it names the inode, not a path), else by f's name.
func linkOpen(f *os.File, dirfd int, name string) error {
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	err := unix.Linkat(unix.AT_FDCWD, proc, dirfd, name, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return unix.Linkat(unix.AT_FDCWD, f.Name(), dirfd, name, 0)
		}
	}
	return err
}

// Rename renames the entry old of d to the entry new of to.
func (d *Dir) Rename(old string, to *Dir, new string) error {
	if err := unix.Renameat(d.fd(), old, to.fd(), new); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(old), New: to.Join(new), Err: err}
	}
	return nil
}

// RenameTo renames the entry old of d over path (a path the caller named
// and checked, like the rollout a write replaces).
func (d *Dir) RenameTo(old, path string) error {
	if err := unix.Renameat(d.fd(), old, unix.AT_FDCWD, path); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(old), New: path, Err: err}
	}
	return nil
}

// Remove removes the entry name of d (not a directory).
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.Join(name), Err: err}
	}
	return nil
}

// RemoveSelf removes d from its parent when it is empty (rmdir): false
// when it is not empty, was opened by path, or is no longer where it was
// opened (then nothing is removed).
func (d *Dir) RemoveSelf() bool {
	if d.parent == nil {
		return false
	}
	var st unix.Stat_t
	if unix.Fstatat(d.parent.fd(), d.base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	if fi, err := d.f.Stat(); err != nil || !sameInode(fi, &st) {
		return false
	}
	return unix.Unlinkat(d.parent.fd(), d.base, unix.AT_REMOVEDIR) == nil
}

func sameInode(fi os.FileInfo, st *unix.Stat_t) bool {
	s, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(s.Dev) == uint64(st.Dev) && uint64(s.Ino) == uint64(st.Ino)
}

// ReadDir lists the entries of d.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.name)
	defer f.Close()
	return f.ReadDir(-1)
}

// Sync makes the renames and removals in d durable.
func (d *Dir) Sync() error { return d.f.Sync() }

// Close closes d and the parents it was opened in.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	err := d.f.Close()
	d.parent.Close()
	return err
}

// Chown gives d itself to uid and gid.
func (d *Dir) Chown(uid, gid int) error { return d.f.Chown(uid, gid) }

// LinkFrom makes name in d a hard link of the file at path (a path the
// caller named, outside d).
func (d *Dir) LinkFrom(path, name string) error {
	if err := unix.Linkat(unix.AT_FDCWD, path, d.fd(), name, 0); err != nil {
		return &os.LinkError{Op: "link", Old: path, New: d.Join(name), Err: err}
	}
	return nil
}

// LinkEntry makes new in d a hard link of old in d, never replacing new.
func (d *Dir) LinkEntry(old, new string) error {
	if err := unix.Linkat(d.fd(), old, d.fd(), new, 0); err != nil {
		return &os.LinkError{Op: "link", Old: d.Join(old), New: d.Join(new), Err: err}
	}
	return nil
}
