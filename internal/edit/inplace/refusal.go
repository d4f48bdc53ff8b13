package inplace

import (
	"errors"
	"fmt"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
)

// The causes a refused write wraps, for errors.Is.
var (
	ErrFileChanged = errors.New("the file changed since it was read")
	ErrWriteFailed = errors.New("writing the result failed")
)

// Kind tells refusals apart: the guard's (Changed, WriteFailed, InUse,
// Busy, CodexWriter, Referenced) and those of the commands that write
// through it.
type Kind int

const (
	// Changed: the input changed between its analysis and the replace
	// (a writer is still appending).
	Changed Kind = iota + 1
	// Symlink: the file to replace is a symbolic link.
	Symlink
	// NotRollout: the input is not a rollout file (a directory, a device,
	// an archive, or nothing in it is a record: repair would empty it).
	NotRollout
	// Compressed: the input is compressed in a format repair cannot
	// write back (gzip, bzip2, xz): it must be decompressed first.
	Compressed
	// BadOutput: the output names a directory or the input itself.
	BadOutput
	// WriteFailed: creating, writing, syncing or renaming a file failed.
	WriteFailed
	// Worse: the result would have more errors of some rule than the
	// input (a bug in a fix).
	Worse
	// InUse: another process holds the input open for writing (Linux);
	// Refusal.Holders names them.
	InUse
	// Busy: another repair or reclaim of the same file is running, or
	// Codex's rollout compression or migration.
	Busy
	// NotRegular: the quarantine or backup path exists and is not a
	// regular file (a symlink, FIFO, device, directory).
	NotRegular
	// CodexWriter: a Codex process holds the thread's writer lock
	// (thread-writer-locks/ID.lock); Refusal.Holders names it. --force does
	// not override it.
	CodexWriter
	// Referenced: another rollout continues the file (a fork's or revert's
	// history_base) past the first byte the write changes
	// (guard_lineage.go). --force does not override it.
	Referenced
	// UnsafeStore: a directory of the artifacts store is a symlink or a
	// file, or another user owns it or may write it
	// (artifacts.OwnerError). --force does not override it.
	UnsafeStore
	// HistoryUnreadable: Codex's history database exists and cannot be
	// read (locked, damaged, not a regular file, a schema this version
	// does not know), so whether the write leaves its projection of the
	// thread stale is unknown (projection.go).
	HistoryUnreadable
)

// Holder is a process holding a file open for writing.
type Holder struct {
	PID     int
	Command string
}

func (h Holder) String() string { return fmt.Sprintf("pid %d (%s)", h.PID, h.Command) }

// Refusal is a write that was not done (a repair, a reclaim, an undo):
// the file is untouched and nothing the command created is left behind.
type Refusal struct {
	Kind    Kind
	Path    string // the file concerned
	Err     error
	Holders []Holder // InUse: who holds it
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse is a Refusal of kind k whose error fmt.Errorf makes.
func Refuse(k Kind, path string, format string, args ...any) *Refusal {
	return &Refusal{Kind: k, Path: path, Err: fmt.Errorf(format, args...)}
}

// StoreRefusal is the refusal of a write whose artifacts directory dir
// could not be opened as artifacts.Place.Open requires: UnsafeStore when
// another user could redirect or replace what goes there (its Path the
// directory at fault), WriteFailed for any other failure.
func StoreRefusal(dir string, err error) *Refusal {
	var oe *artifacts.OwnerError
	if errors.As(err, &oe) {
		return &Refusal{Kind: UnsafeStore, Path: oe.Dir, Err: err}
	}
	if errors.Is(err, artifacts.ErrUnsafeStore) {
		return &Refusal{Kind: UnsafeStore, Path: dir, Err: err}
	}
	return &Refusal{Kind: WriteFailed, Path: dir, Err: fmt.Errorf("%w: %v", ErrWriteFailed, err)}
}
