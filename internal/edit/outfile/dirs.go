package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// A DirError is an output's directory that is missing and cannot be made.
// It names the directory, never a temporary file; callers name the output.
type DirError struct {
	Dir    string
	Reason string // "does not exist", "is not a directory", ...
	Err    error  // the system's error, when there was one
}

func (e *DirError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s %s: %v", e.Dir, e.Reason, e.Err)
	}
	return e.Dir + " " + e.Reason
}

func (e *DirError) Unwrap() error { return e.Err }

// ExitCode: an output path that cannot be written is a usage error.
func (e *DirError) ExitCode() int { return exitUsage }

// MakeParents creates the missing directories on the way to the output
// path, as `mkdir -p` would (0777 less the umask), so that a report bound
// for reports/verify-1.json needs no mkdir first. Callers run it before
// reading any input: a path that cannot be written fails at once, not
// after the run. A directory that exists is used as it is, a symlink to
// one included (writing follows it too); a dangling symlink is not created
// through, and a component that is a file is refused (*DirError).
func MakeParents(output string) error {
	dir := filepath.Dir(output)
	var missing []string
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return &DirError{Dir: dir, Reason: "is not a directory"}
			}
			break
		}
		// ENOTDIR: a file on the way, which the loop reaches next.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return &DirError{Dir: dir, Reason: "could not be looked up", Err: unwrapPath(err)}
		}
		if lfi, lerr := os.Lstat(dir); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			return &DirError{Dir: dir, Reason: "is a symbolic link to nothing: refusing to create a directory through it"}
		}
		missing = append(missing, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o777)
		if errors.Is(err, fs.ErrExist) {
			// Made meanwhile by another writer (parallel shards share reports/).
			if fi, serr := os.Stat(missing[i]); serr == nil && fi.IsDir() {
				continue
			}
		}
		if err != nil {
			return &DirError{Dir: missing[i], Reason: "could not be created", Err: unwrapPath(err)}
		}
	}
	return nil
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
