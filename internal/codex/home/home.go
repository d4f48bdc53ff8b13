// Package home reads what a Codex home keeps beside its rollouts: the
// threads index (state_N.sqlite), the history projection with its byte
// cursor (thread_history_N.sqlite), the per-thread writer locks, the
// maintenance lock and what a crashed migration leaves; and it finds a
// thread's rollouts as Codex does (FindThread, Current: rollout find and
// --thread). It sits beside rollout/ in the data flow: Check turns a home
// into observations that checks/ judges (the home/... rules), and the
// write guard of repair/ asks it whether Codex is writing a thread.
//
// The databases are Codex's: they are opened read-only, with a busy
// timeout, in short read transactions, so that Codex is never blocked or
// disturbed. The one write is DeleteProjection (and RestoreProjection, its
// undo), the projection repair Codex itself does when it rewrites a
// rollout.
package home

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/internal/base/objstore"
)

// The names Codex gives the parts of its home.
const (
	SessionsDir         = "sessions"
	ArchivedSessionsDir = "archived_sessions"
	WriterLocksDir      = "thread-writer-locks"
	coordinationLock    = ".coordination.lock"
	MaintenanceLockPath = ".tmp/rollout-maintenance.lock"
	MigrationsDir       = "rollout-migrations"
)

// Home is a Codex home directory.
type Home struct {
	Dir string // as given, cleaned
}

// New returns the home at dir.
func New(dir string) *Home { return &Home{Dir: filepath.Clean(dir)} }

// Of finds the Codex home of a rollout: the directory above the sessions/
// or archived_sessions/ directory the file lies in (Layout), when that
// directory looks like a home (it has a database, the writer-lock
// directory or .tmp). A rollout outside any home has none.
func Of(rolloutPath string) (*Home, bool) {
	dir, ok := Layout(rolloutPath)
	if !ok || !looksLikeHome(dir) {
		return nil, false
	}
	return New(dir), true
}

// Layout is the directory above the nearest sessions/ or
// archived_sessions/ directory a rollout lies in, made absolute: where
// Codex would look for the rollouts it continues, whether or not the
// directory holds a home's databases too (a copied home).
func Layout(rolloutPath string) (string, bool) {
	if objstore.IsURI(rolloutPath) {
		return "", false // a bucket holds copies of homes, not a home Codex runs in
	}
	abs, err := filepath.Abs(rolloutPath)
	if err != nil {
		return "", false
	}
	for dir := filepath.Dir(abs); ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		if b := filepath.Base(dir); b == SessionsDir || b == ArchivedSessionsDir {
			return parent, true
		}
		dir = parent
	}
}

func looksLikeHome(dir string) bool {
	for _, name := range []string{WriterLocksDir, ".tmp"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
			return true
		}
	}
	return dbPath(dir, "state") != ""
}

var dbName = regexp.MustCompile(`^([a-z_]+)_([0-9]+)\.sqlite$`)

// dbPath is the newest version of a database family in dir ("state" ->
// state_5.sqlite), or "".
func dbPath(dir, family string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestN := "", -1
	for _, e := range entries {
		m := dbName.FindStringSubmatch(e.Name())
		if m == nil || m[1] != family {
			continue
		}
		if n, _ := strconv.Atoi(m[2]); n > bestN {
			best, bestN = filepath.Join(dir, e.Name()), n
		}
	}
	return best
}

// StateDB is the path of the threads index ("" when there is none).
func (h *Home) StateDB() string { return dbPath(h.Dir, "state") }

// HistoryDB is the path of the history projection ("" when none).
func (h *Home) HistoryDB() string { return dbPath(h.Dir, "thread_history") }

// Databases lists every SQLite database of the home with its side files
// (-wal, -shm, -journal) that exist, sorted.
func (h *Home) Databases() []string {
	entries, err := os.ReadDir(h.Dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		base := name
		for _, suf := range []string{"-wal", "-shm", "-journal"} {
			base = strings.TrimSuffix(base, suf)
		}
		if dbName.MatchString(base) && e.Type().IsRegular() {
			out = append(out, filepath.Join(h.Dir, name))
		}
	}
	sort.Strings(out)
	return out
}

// inside reports whether path lies inside dir (both made absolute, and
// with symbolic links resolved where they exist).
func inside(dir, path string) bool {
	rs := newResolver()
	return within(rs.resolve(dir), rs.resolve(path))
}

// within reports whether the resolved path p lies inside the resolved
// directory d.
func within(d, p string) bool {
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolve makes path absolute and resolves the symbolic links of its
// longest existing prefix.
func resolve(path string) string { return newResolver().resolve(path) }

// resolver resolves paths as resolve does and remembers each directory it
// resolved: the rollouts of a home share a few day directories, so a check
// of the home lstats each file once rather than every component of every
// path (filepath.EvalSymlinks), which was half of its cost.
type resolver struct{ dirs map[string]string }

func newResolver() *resolver { return &resolver{dirs: map[string]string{}} }

func (rs *resolver) resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	return rs.abs(abs)
}

// abs resolves a clean absolute path one component at a time, from the
// resolved parent: a component that does not exist (or is a dangling
// link) is kept as it is, as is everything below it.
func (rs *resolver) abs(p string) string {
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
	}
	d, ok := rs.dirs[parent]
	if !ok {
		d = rs.abs(parent)
		rs.dirs[parent] = d
	}
	if d == parent {
		return p // no link above it: p itself, not a copy
	}
	return filepath.Join(d, filepath.Base(p))
}

// Contains reports whether path lies inside the home.
func (h *Home) Contains(path string) bool { return inside(h.Dir, path) }

func baseName(path string) string { return filepath.Base(path) }
