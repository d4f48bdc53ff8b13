package inplace

import (
	"os"
	"path/filepath"
	"time"
)

// dirStamp vouches that the rollout files under some directories are the
// ones a walk found, without walking again: any entry made, removed or
// renamed in a directory changes that directory's modification time. It
// is taken before the walk it vouches for, so a file made during the walk
// changes a time it recorded. Rechecking costs a stat per directory
// instead of reading every file name: reclaim checks the references of
// each file it changes, and re-listing a home of 50,000 rollouts for each
// made a run quadratic.
type dirStamp struct {
	at    time.Time
	roots []string
	dirs  map[string]dirState
	ok    bool // false: it cannot vouch (a symlink or an unreadable directory)
}

type dirState struct {
	exists  bool
	mod     time.Time
	subdirs []string
}

// coarseClock is how recent a change must be not to be trusted: on
// file systems with coarse timestamps, two changes within one tick leave
// the same time.
const coarseClock = 2 * time.Second

// stampDirs records roots and, when recursive, every directory below them.
func stampDirs(roots []string, recursive bool) dirStamp {
	s := dirStamp{at: time.Now(), roots: roots, dirs: map[string]dirState{}, ok: true}
	var visit func(d string, depth int)
	visit = func(d string, depth int) {
		fi, err := os.Stat(d)
		if err != nil {
			if !os.IsNotExist(err) || depth > 0 {
				s.ok = false
			}
			s.dirs[d] = dirState{}
			return
		}
		if !fi.IsDir() {
			s.ok = false
			return
		}
		st := dirState{exists: true, mod: fi.ModTime()}
		entries, err := os.ReadDir(d)
		if err != nil {
			s.ok = false
			return
		}
		for _, e := range entries {
			switch {
			case e.Type()&os.ModeSymlink != 0:
				s.ok = false // a walk may follow it; its changes would not show here
			case e.IsDir() && recursive:
				st.subdirs = append(st.subdirs, filepath.Join(d, e.Name()))
			}
		}
		s.dirs[d] = st
		for _, sub := range st.subdirs {
			visit(sub, depth+1)
		}
	}
	for _, r := range roots {
		visit(r, 0)
	}
	return s
}

// unchanged reports whether every directory stamped still has its time
// (and every root that was absent still is), each time older than the
// stamp by more than a tick.
func (s dirStamp) unchanged() bool {
	if !s.ok {
		return false
	}
	var visit func(d string) bool
	visit = func(d string) bool {
		st, known := s.dirs[d]
		if !known {
			return false
		}
		fi, err := os.Stat(d)
		if !st.exists {
			return os.IsNotExist(err)
		}
		if err != nil || !fi.IsDir() || !fi.ModTime().Equal(st.mod) || !st.mod.Before(s.at.Add(-coarseClock)) {
			return false
		}
		for _, sub := range st.subdirs {
			if !visit(sub) {
				return false
			}
		}
		return true
	}
	for _, r := range s.roots {
		if !visit(r) {
			return false
		}
	}
	return true
}
