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
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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
// removed it: bytes that reached the old inode after the command's read,
// or a writer that still holds the old inode and may append to it.
type Late struct {
	Path  string // the rollout
	Bytes int64  // how many so far
	// Kept is the file that holds them ("": they could not be kept).
	// Inode: Kept is the replaced inode itself, kept reachable (a hard
	// link), where a writer that holds it goes on appending; the late
	// bytes are those from offset From to its end, whenever it is read.
	// Else Kept is a copy of the late bytes alone, as they were.
	Kept  string
	Inode bool
	From  int64
	// Writer: a process (or Codex's writer lock) still held the replaced
	// file for writing after the switch.
	Writer bool
	Err    error // why they could not be kept
}

func (l *Late) Error() string {
	what := fmt.Sprintf("%s grew by %d bytes while it was being replaced", l.Path, l.Bytes)
	if l.Bytes == 0 {
		what = fmt.Sprintf("%s was still open for writing when it was replaced", l.Path)
	}
	switch {
	case l.Kept == "":
		return fmt.Sprintf("%s, and they could not be kept: %v", what, l.Err)
	case l.Inode:
		return fmt.Sprintf("%s: the replaced file is kept as %s (a writer that still holds it appends there): append everything after its first %d bytes with: tail -c +%d %s >> %s",
			what, l.Kept, l.From, l.From+1, l.Kept, l.Path)
	}
	return fmt.Sprintf("%s: they are in %s (append them with: cat %s >> %s)", what, l.Kept, l.Kept, l.Path)
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
	// Kept names a hard link of the file that the caller made in Place
	// before the switch (repair's backup): the replaced inode stays
	// reachable through it. When "", Replace links the locked inode into
	// Place itself (FILE.bak.N) and removes the link again after the
	// switch unless bytes arrived or a writer still holds the inode.
	Kept string
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
// by name, and is checked for bytes that arrived in between and for a
// writer that still holds it (a process, or Codex's writer lock): then the
// old inode stays reachable under s.Kept (or the link Replace made), where
// whatever such a writer appends later lands too, and a *Late says from
// which offset on its bytes belong to the file (the command exits 4 with
// it; with s.Force a writer that wrote nothing yet is not reported). Where
// no hard link can be made, the bytes that arrived are copied to
// s.Place.Late(i). So nothing an agent appends is lost.
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
	kept := s.Kept
	var link *keptLink
	if kept == "" && s.Place.Base != "" {
		if link = g.linkInode(s.Place); link != nil {
			defer link.close()
		}
	}
	if s.At != nil {
		s.At(StageSwitch)
	}
	if err := step(); err != nil {
		link.remove()
		return nil, err
	}
	n, err := g.Size()
	if err != nil {
		return nil, err // a link made stays, under its temporary name: the next run removes it
	}
	writer := g.stillWritten()
	if !writer && n <= s.Read {
		link.remove()
		return nil, nil
	}
	if link != nil {
		if kept, err = link.keep(s.Place); err != nil {
			kept = ""
		}
	}
	if n <= s.Read && s.Force {
		return nil, nil // a writer the user accepted: what it appends is kept, unreported
	}
	late := &Late{Path: g.path, Bytes: max(n-s.Read, 0), Writer: writer}
	switch {
	case kept != "":
		late.Kept, late.Inode, late.From = kept, true, s.Read
	case n > s.Read:
		late.Kept, late.Err = keepLate(g.f, s.Read, n, s.Place)
	default:
		late.Err = errors.New("no hard link of the replaced file could be made: what the writer appends next is lost")
	}
	return late, nil
}

// stillWritten reports whether, after the switch, another process holds
// the replaced inode open for writing or Codex's writer lock of the thread
// is held: what either writes next may land in the old inode.
func (g *Guard) stillWritten() bool {
	if g.codex.checkWriter(g.path) != nil {
		return true
	}
	fi, err := g.f.Stat()
	return err == nil && len(writersOf(fi)) > 0
}

// keptLink is the hard link Replace made of the file it replaces, in the
// store directory it opened: under a temporary name (.FILE.bak.tmpX) until
// keep names it, so that a command killed before it knows whether to keep
// it leaves a temporary file the next write or undo of FILE removes.
type keptLink struct {
	dir  *outfile.Dir
	name string // in dir
}

// linkInode links the locked inode into place under a temporary name (nil
// when no link can be made: another file system, no hard links, a store
// that Open refuses).
func (g *Guard) linkInode(place artifacts.Place) *keptLink {
	d, err := place.Open(true)
	if err != nil {
		return nil
	}
	for range 100 {
		name := "." + filepath.Base(place.Backup(0)) + ".tmp" + strconv.FormatUint(uint64(rand.Uint32()), 36)
		err := g.Link(d, name)
		if err == nil {
			return &keptLink{dir: d, name: name}
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	artifacts.TidyDir(d)
	d.Close()
	return nil
}

// keep gives the link the first free name FILE.bak.N of place (a link,
// then the removal of the temporary name: an existing backup is never
// replaced), and returns that name.
func (k *keptLink) keep(place artifacts.Place) (string, error) {
	for i := 0; i <= artifacts.MaxIndex; i++ {
		name := place.Backup(i)
		err := k.dir.LinkEntry(k.name, filepath.Base(name))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		k.dir.Remove(k.name)
		k.dir.Sync()
		return name, nil
	}
	return "", fmt.Errorf("%s through .%d all exist", place.Backup(0), artifacts.MaxIndex)
}

// remove removes the link (nothing was appended, nobody writes).
func (k *keptLink) remove() {
	if k != nil {
		k.dir.Remove(k.name)
		artifacts.TidyDir(k.dir)
	}
}

func (k *keptLink) close() { k.dir.Close() }

// keepLate copies bytes [from, to) of f to a new file named by place.Late,
// private to the rollout's owner.
func keepLate(f *os.File, from, to int64, place artifacts.Place) (string, error) {
	d, err := place.Open(true)
	if err != nil {
		return "", err
	}
	defer d.Close()
	fi, _ := f.Stat()
	for i := 0; i <= artifacts.MaxIndex; i++ {
		name := place.Late(i)
		base := filepath.Base(name)
		out, err := d.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
			d.Remove(base)
			return "", err
		}
		d.Sync()
		return name, nil
	}
	return "", fmt.Errorf("%s through .%d all exist", place.Late(0), artifacts.MaxIndex)
}
