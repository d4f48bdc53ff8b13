package repair

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// Guard is what protects a file rewritten in place, for repair and for
// any other command that replaces a rollout (rollout reclaim): an
// exclusive advisory lock on the file for the whole transaction, shared by
// every such command so that two rewrites of one file never interleave,
// and the refusal of a file another process holds open for writing.
type Guard struct {
	path string
	f    *os.File // holds the lock; closing it releases the lock
}

// Lock takes the exclusive lock on path without waiting: a *Refusal of
// kind Busy when another rewrite holds it. The lock is on the inode: a
// file replaced between open and lock is opened again.
func Lock(path string) (*Guard, error) {
	for range 3 {
		f, err := os.Open(path)
		if err != nil {
			return nil, &rollout.PathError{Path: path, Err: errors.Unwrap(err)}
		}
		if err := lock(f); err != nil {
			f.Close()
			if errors.Is(err, errLocked) {
				return nil, refuse(Busy, path, "another repair or reclaim of %s is running", path)
			}
			return nil, &Refusal{Kind: WriteFailed, Path: path, Err: fmt.Errorf("locking %s: %w", path, err)}
		}
		locked, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(locked, now) {
			return &Guard{path: path, f: f}, nil
		}
		f.Close() // replaced (by another rewrite) before it was locked
	}
	return nil, refuse(Changed, path, "%w: %s keeps being replaced", errFileChanged, path)
}

// CheckWriters refuses (InUse, naming the processes) when another process
// holds the file open for writing: an agent idle between turns keeps its
// rollout open for append, and its next write would land in the replaced
// file. Linux only (from /proc); elsewhere it finds nobody.
func (g *Guard) CheckWriters() *Refusal {
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
	r := refuse(InUse, g.path, "%s is open for writing by %s: replacing it would lose what it writes next", g.path, strings.Join(names, ", "))
	r.Holders = hs
	return r
}

// Release drops the lock.
func (g *Guard) Release() {
	if g != nil && g.f != nil {
		g.f.Close()
		g.f = nil
	}
}
