//go:build !unix

package outfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a directory named by its path: without openat, its entries are
// reached through the path (see dir_unix.go for what unix systems do).
type Dir struct {
	name   string
	parent *Dir
}

// OpenDir opens the directory at path.
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &UnsafeError{Path: path, Kind: kindOf(fi.Mode())}
	}
	return &Dir{name: path}, nil
}

// Sub opens the directory name in d; a symlink is an *UnsafeError.
func (d *Dir) Sub(name string) (*Dir, error) {
	p := d.Join(name)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &UnsafeError{Path: p, Kind: kindOf(fi.Mode())}
	}
	return &Dir{name: p, parent: d}, nil
}

func (d *Dir) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(d.Join(name), perm) }
func (d *Dir) Name() string                              { return d.name }
func (d *Dir) Join(name string) string                   { return filepath.Join(d.name, name) }
func (d *Dir) Parent() *Dir                              { return d.parent }
func (d *Dir) Stat() (os.FileInfo, error)                { return os.Stat(d.name) }

func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := d.CheckRegularOrAbsent(name); err != nil {
		return nil, err
	}
	return os.OpenFile(d.Join(name), flag, perm)
}

func (d *Dir) OpenExisting(name string) (*os.File, error) { return OpenExisting(d.Join(name)) }
func (d *Dir) CheckRegularOrAbsent(name string) error     { return CheckRegularOrAbsent(d.Join(name)) }
func (d *Dir) Absent(name string) bool                    { return Absent(d.Join(name)) }

func (d *Dir) Link(f *os.File, name string) error { return os.Link(f.Name(), d.Join(name)) }

func (d *Dir) Rename(old string, to *Dir, new string) error {
	return os.Rename(d.Join(old), to.Join(new))
}

func (d *Dir) RenameTo(old, path string) error { return os.Rename(d.Join(old), path) }
func (d *Dir) Remove(name string) error        { return os.Remove(d.Join(name)) }

func (d *Dir) RemoveSelf() bool {
	return d.parent != nil && os.Remove(d.name) == nil
}

func (d *Dir) ReadDir() ([]fs.DirEntry, error) { return os.ReadDir(d.name) }
func (d *Dir) Sync() error                     { return nil }
func (d *Dir) Close() error                    { return nil }

func (d *Dir) Chown(uid, gid int) error { return os.Chown(d.name, uid, gid) }

func (d *Dir) LinkFrom(path, name string) error { return os.Link(path, d.Join(name)) }

func (d *Dir) LinkEntry(old, new string) error { return os.Link(d.Join(old), d.Join(new)) }
