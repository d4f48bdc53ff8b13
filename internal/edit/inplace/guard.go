// Package inplace is the write guard of every command that replaces or
// removes a rollout in place (repair --write, reclaim --write, both undos,
// artifacts --move): the lock on the file, Codex's maintenance and writer
// locks, the processes holding it open for writing, the rollouts that
// continue it (fork references), its history projection, and the switch
// that keeps what an agent appends meanwhile. It sits in the edit stage
// below repair, reclaim and artifacts, above codex/home and
// codex/lineage, and never prints.
package inplace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/rollout"
)

// Guard is what protects a file rewritten in place, for repair and for
// any other command that replaces a rollout (rollout reclaim): an
// exclusive advisory lock on the file for the whole transaction, shared by
// every such command so that two rewrites of one file never interleave,
// and the refusal of a file another process holds open for writing. In a
// Codex home it also holds Codex's maintenance lock for the transaction
// and refuses a thread whose Codex writer lock is held (guard_codex.go).
type Guard struct {
	path  string
	f     *os.File // holds the lock; closing it releases the lock
	codex *codexLocks
}

// Lock takes the exclusive lock on path without waiting: a *Refusal of
// kind Busy when another rewrite holds it. The lock is on the inode: a
// file replaced between open and lock is opened again. In a Codex home it
// then takes Codex's maintenance lock (Busy while Codex compresses or
// migrates) and refuses (InUse) while the thread's writer lock is held.
func Lock(path string) (*Guard, error) {
	for range 3 {
		f, err := os.Open(path)
		if err != nil {
			return nil, &rollout.PathError{Path: path, Err: errors.Unwrap(err)}
		}
		if err := lock(f); err != nil {
			f.Close()
			if errors.Is(err, errLocked) {
				return nil, Refuse(Busy, path, "another repair or reclaim of %s is running", path)
			}
			return nil, &Refusal{Kind: WriteFailed, Path: path, Err: fmt.Errorf("locking %s: %w", path, err)}
		}
		locked, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(locked, now) {
			c, r := lockCodex(path)
			if r != nil {
				f.Close()
				return nil, r
			}
			return &Guard{path: path, f: f, codex: c}, nil
		}
		f.Close() // replaced (by another rewrite) before it was locked
	}
	return nil, Refuse(Changed, path, "%w: %s keeps being replaced", ErrFileChanged, path)
}

// CheckWriters refuses (InUse, naming the processes) when another process
// holds the file open for writing: an agent idle between turns keeps its
// rollout open for append, and its next write would land in the replaced
// file. Linux only (from /proc); elsewhere it finds nobody.
func (g *Guard) CheckWriters() *Refusal {
	if r := g.codex.checkWriter(g.path); r != nil {
		return r
	}
	fi, err := g.f.Stat()
	if err != nil {
		return nil
	}
	hs := writersOf(fi)
	if len(hs) == 0 {
		return nil
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.String()
	}
	r := Refuse(InUse, g.path, "%s is open for writing by %s: replacing it would lose what it writes next", g.path, strings.Join(names, ", "))
	r.Holders = hs
	return r
}

// Release drops the lock.
func (g *Guard) Release() {
	if g != nil && g.f != nil {
		g.f.Close()
		g.f = nil
		g.codex.release()
	}
}

// Late is what an agent appended to a file while a command replaced or
// removed it: bytes that reached the old inode after the command's read.
type Late struct {
	Path  string // the rollout
	Bytes int64  // how many
	Kept  string // the file they were copied to ("": they could not be kept)
	Err   error  // why they could not be kept
}

func (l *Late) Error() string {
	if l.Kept == "" {
		return fmt.Sprintf("%s grew by %d bytes while it was being replaced, and they could not be kept: %v", l.Path, l.Bytes, l.Err)
	}
	return fmt.Sprintf("%s grew by %d bytes while it was being replaced: they are in %s (append them with: cat %s >> %s)", l.Path, l.Bytes, l.Kept, l.Kept, l.Path)
}

// Size is the size of the locked inode now.
func (g *Guard) Size() (int64, error) {
	fi, err := g.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Link makes name in d a hard link of the locked inode (not of whatever
// the path names by then): repair's backup.
func (g *Guard) Link(d *outfile.Dir, name string) error { return d.Link(g.f, name) }

// SameFile reports whether path still names the locked inode.
func (g *Guard) SameFile(path string) bool {
	locked, err1 := g.f.Stat()
	now, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(locked, now)
}

// StageSwitch is the step of Replace at which Switch.At is called: right
// before the rename or removal (the tests force interleavings there).
const StageSwitch = "switch"

// Switch says how Replace takes a file out of use.
type Switch struct {
	// Read is how many bytes of the file the command read and accounted for.
	Read int64
	// From is the offset of the first byte the step changes (of the
	// decompressed bytes; Read when it changes none of them, as compressing
	// does): a rollout that continues the file past it makes the guard
	// refuse (guard_lineage.go). 0, the default, changes the whole file.
	From int64
	// Place is where bytes that arrive during the switch are kept.
	Place artifacts.Place
	// Force replaces the file even when another process holds it open for
	// writing (what it writes next is lost).
	Force bool
	At    func(stage string) // tests: called with StageSwitch
}

// Replace is the last step of every command that replaces or removes a
// rollout (repair --write, reclaim --write, both undos): step renames
// another file over the locked one, or removes it.
//
// Right before the step, the file must still be s.Read bytes long (else a
// *Refusal of kind Changed), no other rollout may continue it past s.From
// (Referenced) and no other process may hold it open for writing
// (CheckWriters, unless s.Force): nothing is done then. Right
// after it the old inode is out of reach of any writer that opens the file
// by name, and is checked for bytes that arrived in between: they are
// copied to s.Place.Late(i) and returned as a *Late (the command exits 4
// with it), so nothing an agent appends is lost.
func (g *Guard) Replace(s Switch, step func() error) (*Late, error) {
	if !g.SameFile(g.path) {
		return nil, Refuse(Changed, g.path, "%w: %s was replaced by another file", ErrFileChanged, g.path)
	}
	if n, err := g.Size(); err != nil || n != s.Read {
		return nil, Refuse(Changed, g.path, "%w: %s is now %d bytes, it was %d", ErrFileChanged, g.path, n, s.Read)
	}
	if r := g.codex.checkWriter(g.path); r != nil {
		return nil, r // even with Force: Codex is writing the thread
	}
	if r := CheckReferences(g.path, s.From); r != nil {
		return nil, r // even with Force: a fork inherits these bytes
	}
	if !s.Force {
		if r := g.CheckWriters(); r != nil {
			return nil, r
		}
	}
	if s.At != nil {
		s.At(StageSwitch)
	}
	if err := step(); err != nil {
		return nil, err
	}
	n, err := g.Size()
	if err != nil || n <= s.Read {
		return nil, err
	}
	late := &Late{Path: g.path, Bytes: n - s.Read}
	late.Kept, late.Err = keepLate(g.f, s.Read, n, s.Place)
	return late, nil
}

// keepLate copies bytes [from, to) of f to a new file named by place.Late,
// private to the rollout's owner.
func keepLate(f *os.File, from, to int64, place artifacts.Place) (string, error) {
	if err := place.Prepare(); err != nil {
		return "", err
	}
	fi, _ := f.Stat()
	for i := 0; i <= artifacts.MaxIndex; i++ {
		name := place.Late(i)
		out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if fi != nil {
			out.Chown(Owner(fi)) // best effort: root working on a user's file
		}
		_, err = io.Copy(out, io.NewSectionReader(f, from, to-from))
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		outfile.SyncDir(filepath.Dir(name))
		return name, nil
	}
	return "", fmt.Errorf("%s through .%d all exist", place.Late(0), artifacts.MaxIndex)
}
