// Package outfile writes the files the commands produce (reports, charts,
// repaired rollouts, quarantines, backups) so that no output ever destroys
// what its path names. It belongs to the edits (internal/edit), the guard
// for whole output files, and imports nothing of the module: the printers
// and the rewriter write to an io.Writer, outfile decides how the bytes
// reach the path.
//
//   - Inputs.Check refuses, before anything is read, an output that is one
//     of the inputs (same device and inode) or an input's quarantine or
//     backup (*ConflictError, exit code 2).
//   - Create writes a regular or absent target through a temporary file in
//     the same directory, fsynced, renamed over it, directory fsynced. A
//     symlink is resolved and its target replaced (the link stays); a device,
//     FIFO or socket is written through, never renamed over.
//   - New files honour the umask; replacing a file keeps its mode (and its
//     owner, group and xattrs where permitted); Options.CopyFrom copies them
//     from another file.
//   - OpenExisting opens a file that must be regular or absent without
//     following symlinks (*UnsafeError, exit code 4).
//   - MakeParents creates an output's missing directories, as mkdir -p,
//     before anything is read (*DirError, exit code 2).
//
// Errors name the path the caller gave, or its directory, never the
// temporary file.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Exit codes of the typed errors, as the commands document them.
const (
	exitUsage  = 2
	exitUnsafe = 4
)

// QuarantineSuffix and BackupSuffix name the files repair derives from the
// file it rewrites: FILE.quarantine.jsonl and FILE.bak (FILE.bak.N).
const (
	QuarantineSuffix = ".quarantine.jsonl"
	BackupSuffix     = ".bak"
)

// ConflictError is an output that would overwrite an input.
type ConflictError struct {
	Output string
	Input  string
	What   string // "is", "is the quarantine file of", "is a backup of"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("output %s %s input %s: refusing to overwrite it", e.Output, e.What, e.Input)
}

// ExitCode: an output naming an input is a usage error.
func (e *ConflictError) ExitCode() int { return exitUsage }

// UnsafeError is a path that must be a regular file (or absent) and is not.
type UnsafeError struct {
	Path string
	Kind string // "symbolic link", "FIFO", "directory", ...
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file: refusing to use it", e.Path, e.Kind)
}

// ExitCode: refusing to touch a path is exit 4 (unsafe to modify).
func (e *UnsafeError) ExitCode() int { return exitUnsafe }

// Inputs are the files a command reads; outputs must not name them.
type Inputs struct {
	files []input
}

type input struct {
	path string
	fi   os.FileInfo // the file itself (symlinks followed)
	dirs []named     // where its name lives: as given, and symlinks resolved
}

// named is a directory entry: the directory's identity and a base name.
type named struct {
	dir  os.FileInfo
	base string
}

// Add records an input. Paths that do not exist (or "-") are ignored: they
// cannot be overwritten.
func (in *Inputs) Add(paths ...string) {
	for _, p := range paths {
		if p == "-" || p == "" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		it := input{path: p, fi: fi}
		if n, ok := entryOf(p); ok {
			it.dirs = append(it.dirs, n)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if n, ok := entryOf(real); ok {
				it.dirs = append(it.dirs, n)
			}
		}
		in.files = append(in.files, it)
	}
}

// Check returns a *ConflictError when one of the outputs is an input, or
// the quarantine or a backup of one. Empty names and "-" (standard
// output) are skipped.
func (in *Inputs) Check(outputs ...string) error {
	for _, out := range outputs {
		if out == "" || out == "-" {
			continue
		}
		if err := in.check(out); err != nil {
			return err
		}
	}
	return nil
}

func (in *Inputs) check(out string) error {
	ofi, statErr := os.Stat(out)
	var names []named
	if n, ok := entryOf(out); ok {
		names = append(names, n)
	}
	if n, ok := finalEntry(out); ok {
		names = append(names, n)
	}
	for _, it := range in.files {
		if statErr == nil && os.SameFile(ofi, it.fi) {
			return &ConflictError{Output: out, Input: it.path, What: "is"}
		}
		for _, o := range names {
			for _, d := range it.dirs {
				if !os.SameFile(o.dir, d.dir) {
					continue
				}
				switch {
				case o.base == d.base+QuarantineSuffix:
					return &ConflictError{Output: out, Input: it.path, What: "is the quarantine file of"}
				case isBackupName(o.base, d.base):
					return &ConflictError{Output: out, Input: it.path, What: "is a backup of"}
				}
			}
		}
	}
	return nil
}

// isBackupName: NAME.bak or NAME.bak.N.
func isBackupName(base, of string) bool {
	rest, ok := strings.CutPrefix(base, of+BackupSuffix)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	n, ok := strings.CutPrefix(rest, ".")
	_, err := strconv.ParseUint(n, 10, 32)
	return ok && err == nil
}

// entryOf identifies a path by its directory's identity and base name.
func entryOf(p string) (named, bool) {
	dfi, err := os.Stat(filepath.Dir(p))
	if err != nil {
		return named{}, false
	}
	return named{dir: dfi, base: filepath.Base(p)}, true
}

// finalEntry identifies the name a path's symlinks (dangling ones too)
// end at.
func finalEntry(p string) (named, bool) {
	t, err := resolveLinks(p)
	if err != nil {
		return named{}, false
	}
	return entryOf(t)
}

// resolveLinks follows symlinks on the last component of p, dangling ones
// included, and returns the name they end at.
func resolveLinks(p string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", p)
}

// Options say how Create makes a file.
type Options struct {
	// Perm of a new file before the umask; 0 means 0666.
	Perm fs.FileMode
	// CopyFrom, when set, is a file whose mode, owner, group and (best
	// effort) extended attributes the output takes.
	CopyFrom os.FileInfo
	// CopyXattrsFrom names the file of CopyFrom, to read its xattrs.
	CopyXattrsFrom string
	// TempDir is where the temporary file is made ("": beside the target).
	// It must be on the target's file system: Commit renames across it.
	TempDir string
	// RegularOnly refuses (*UnsafeError) a target that exists and is not a
	// regular file: a symlink is neither followed nor replaced, a device or
	// FIFO never written through. For the files rollout derives from a
	// rollout, where a planted symlink would send a root process anywhere.
	RegularOnly bool
	// In, when set, is the directory, held open, where the temporary file
	// is made and from which it is renamed (relative to it, never by a
	// path another user could redirect meanwhile); TempDir is ignored.
	In *Dir
	// Owner, when set and CopyFrom is not, is a file whose owner and
	// group a new output takes (best effort: root writing a user's
	// artifact); its mode stays Perm.
	Owner os.FileInfo
}

// File is an output being written. Write to it, then Commit or Abort.
type File struct {
	path   string   // the path named by the caller
	target string   // what is replaced: path with symlinks resolved
	f      *os.File // the temporary file, or the device/FIFO written through
	tmp    string   // "" when writing through
	opts   Options
	// With Options.In: the temporary file's name in it, and the target as
	// an entry of a directory held open (CreateIn; nil: the path target).
	tmpBase string
	tdir    *Dir
	tname   string
	done    bool
	synced  bool // Prepare ran: Commit only renames
}

// ErrNotDurable is returned by Commit when the output is in place but
// syncing its directory failed: the rename may not survive a crash.
var ErrNotDurable = errors.New("syncing the directory failed")

// Create starts writing path. Nothing at path changes before Commit,
// except for a device, FIFO or socket, which is written as it goes.
func Create(path string, opts Options) (*File, error) {
	if opts.Perm == 0 {
		opts.Perm = 0o666
	}
	if opts.RegularOnly {
		if err := CheckRegularOrAbsent(path); err != nil {
			return nil, err
		}
	}
	target, err := resolveLinks(path)
	if err != nil {
		return nil, err
	}
	// A symlink stays: what it names is replaced (or created).
	fi, err := os.Lstat(target)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		// A device, FIFO or socket: write through it.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{path: path, target: target, f: f, opts: opts}, nil
	}
	if err == nil && opts.CopyFrom == nil {
		// Replacing a regular file keeps what it was.
		opts.CopyFrom, opts.CopyXattrsFrom = fi, target
	}
	if opts.In != nil {
		f, base, err := createTempIn(opts.In, filepath.Base(target), opts.Perm)
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
		}
		return &File{path: path, target: target, f: f, tmp: opts.In.Join(base), tmpBase: base, opts: opts}, nil
	}
	f, tmp, err := createTemp(target, opts.TempDir, opts.Perm)
	if err != nil {
		return nil, createError(path, target, opts.TempDir, err)
	}
	return &File{path: path, target: target, f: f, tmp: tmp, opts: opts}, nil
}

// CreateIn starts writing the entry name of dir, a directory held open:
// the temporary file is made in it and renamed over the entry relative to
// it. The entry must be a regular file or absent (*UnsafeError); replacing
// one keeps its mode, owner and group.
func CreateIn(dir *Dir, name string, opts Options) (*File, error) {
	if opts.Perm == 0 {
		opts.Perm = 0o666
	}
	old, err := dir.OpenExisting(name)
	if err != nil {
		return nil, err
	}
	if old != nil {
		fi, err := old.Stat()
		old.Close()
		if err != nil {
			return nil, err
		}
		if opts.CopyFrom == nil {
			opts.CopyFrom, opts.CopyXattrsFrom = fi, ""
		}
	}
	opts.In = dir
	f, base, err := createTempIn(dir, name, opts.Perm)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: dir.Join(name), Err: unwrapPath(err)}
	}
	path := dir.Join(name)
	return &File{path: path, target: path, f: f, tmp: dir.Join(base), tmpBase: base, tdir: dir, tname: name, opts: opts}, nil
}

// WriteIn is Write for the entry name of dir (see CreateIn).
func WriteIn(dir *Dir, name string, opts Options, write func(io.Writer) error) error {
	f, err := CreateIn(dir, name, opts)
	if err != nil {
		return err
	}
	return writeAll(f, write)
}

// createTempIn makes a new file for base in dir, relative to it.
func createTempIn(dir *Dir, base string, perm fs.FileMode) (*os.File, string, error) {
	for i := 0; ; i++ {
		name := "." + base + ".tmp" + strconv.FormatUint(uint64(rand.Uint32()), 36)
		f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			return nil, "", err
		}
	}
}

// createError says why the temporary file could not be made in terms of
// what the user named: the output, or its missing directory; never the
// temporary file, a name they never gave.
func createError(path, target, tempDir string, err error) error {
	dir := tempDir
	if dir == "" {
		dir = filepath.Dir(target)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &DirError{Dir: dir, Reason: "does not exist"}
	}
	return &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
}

// named replaces the temporary file in err by the output's path.
func (o *File) named(err error) error {
	if o.tmp == "" || err == nil {
		return err
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == o.tmp {
		return &fs.PathError{Op: pe.Op, Path: o.path, Err: pe.Err}
	}
	if le := (*os.LinkError)(nil); errors.As(err, &le) && le.Old == o.tmp {
		return &fs.PathError{Op: "rename into place", Path: o.path, Err: le.Err}
	}
	return err
}

// createTemp makes a new file next to target (or in dir), created with
// perm so that the umask applies.
func createTemp(target, dir string, perm fs.FileMode) (*os.File, string, error) {
	beside, base := filepath.Split(target)
	if dir == "" {
		dir = beside
	}
	for i := 0; ; i++ {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(uint64(rand.Uint32()), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			return nil, "", err
		}
	}
}

// Name is the path the caller named.
func (o *File) Name() string { return o.path }

// TempName is the temporary file (empty when writing through a device).
func (o *File) TempName() string { return o.tmp }

// OS returns the file being written (the temporary one for a regular target).
func (o *File) OS() *os.File { return o.f }

func (o *File) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	return n, o.named(err)
}

// Prepare completes the file short of putting it in place: for a regular
// target the temporary file takes the metadata asked for and is fsynced,
// so that Commit only renames. A caller that checks something right before
// the rename (repair: that its input did not change) keeps that window
// short.
func (o *File) Prepare() error {
	if o.done {
		return errors.New("outfile: already committed or aborted")
	}
	if o.tmp == "" || o.synced {
		return nil
	}
	err := o.applyMeta()
	if err == nil {
		err = o.f.Sync()
	}
	o.synced = err == nil
	return o.named(err)
}

// Commit makes the output final: for a regular target the temporary file
// takes the metadata asked for, is fsynced (unless Prepare did) and
// renamed over the target, and the directory is fsynced (ErrNotDurable
// when that fails: the output is in place all the same).
func (o *File) Commit() error {
	if o.done {
		return errors.New("outfile: already committed or aborted")
	}
	if o.tmp == "" {
		o.done = true
		return o.f.Close()
	}
	err := o.Prepare()
	o.done = true
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		switch {
		case o.opts.In == nil:
			err = os.Rename(o.tmp, o.target)
		case o.tdir != nil:
			err = o.opts.In.Rename(o.tmpBase, o.tdir, o.tname)
		default:
			err = o.opts.In.RenameTo(o.tmpBase, o.target)
		}
	}
	if err != nil {
		o.removeTemp()
		return o.named(err)
	}
	if o.tdir != nil {
		err = o.tdir.Sync()
	} else {
		err = SyncDir(filepath.Dir(o.target))
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotDurable, err)
	}
	return nil
}

func (o *File) removeTemp() {
	if o.opts.In != nil {
		o.opts.In.Remove(o.tmpBase)
	} else {
		os.Remove(o.tmp)
	}
}

func (o *File) applyMeta() error {
	if o.opts.CopyFrom == nil {
		if o.opts.Owner != nil {
			chown(o.f, o.opts.Owner)
		}
		return nil
	}
	return CopyMetadata(o.f, o.opts.CopyFrom, o.opts.CopyXattrsFrom)
}

// Abort removes the temporary file; the target is untouched. Calling it
// after Commit does nothing, so `defer f.Abort()` is the usual pattern.
func (o *File) Abort() {
	if o == nil || o.done {
		return
	}
	o.done = true
	o.f.Close()
	if o.tmp != "" {
		o.removeTemp()
	}
}

// Write creates path with write's output, buffered; on any error the
// target is untouched (except a device or FIFO, which got what was
// written).
func Write(path string, opts Options, write func(io.Writer) error) error {
	f, err := Create(path, opts)
	if err != nil {
		return err
	}
	return writeAll(f, write)
}

func writeAll(f *File, write func(io.Writer) error) error {
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir fsyncs a directory, making a rename in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// OpenExisting opens path for reading without following a symlink. It
// returns (nil, nil) when path does not exist and an *UnsafeError when it
// is anything but a regular file: a FIFO is opened non-blocking so it
// cannot hang, and is refused.
func OpenExisting(path string) (*os.File, error) {
	f, err := openNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if isSymlinkErr(err) {
			return nil, &UnsafeError{Path: path, Kind: "symbolic link"}
		}
		return nil, err
	}
	return checkRegular(f, path)
}

// checkRegular returns f, opened non-blocking, made blocking, when it is
// a regular file; else it closes it (an *UnsafeError).
func checkRegular(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &UnsafeError{Path: path, Kind: kindOf(fi.Mode())}
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Absent reports whether nothing is at path, not even a dangling symlink:
// the undos tell by it a step already done from one not begun.
func Absent(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// CheckRegularOrAbsent refuses (an *UnsafeError) a path that exists and is
// not a regular file, without following symlinks or opening it.
func CheckRegularOrAbsent(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &UnsafeError{Path: path, Kind: kindOf(fi.Mode())}
	}
	return nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// CopyMetadata gives f the mode of src and, best effort, its owner, group
// (only root may give a file away) and extended attributes (read from
// srcPath; Linux only).
func CopyMetadata(f *os.File, src os.FileInfo, srcPath string) error {
	if err := f.Chmod(src.Mode().Perm()); err != nil {
		return err
	}
	chown(f, src)
	if srcPath != "" {
		copyXattrs(srcPath, f)
	}
	return nil
}
