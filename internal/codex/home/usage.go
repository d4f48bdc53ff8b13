package home

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Usage is the disk space a home's state takes beside its rollouts: the
// SQLite databases with their -wal, -shm and -journal files (a TUI log
// database grows to hundreds of MB), and what crashed migrations left.
type Usage struct {
	Home  string
	Files []UsedFile // biggest first
	Bytes int64
}

// UsedFile is one file of a home's state.
type UsedFile struct {
	Path  string
	Kind  string // "database", "wal", "shm", "journal", "migration-journal", "staged-migration"
	Bytes int64
}

// Biggest is the largest file, if any.
func (u Usage) Biggest() (UsedFile, bool) {
	if len(u.Files) == 0 {
		return UsedFile{}, false
	}
	return u.Files[0], true
}

// Usage measures the home's databases and migration leftovers.
func (h *Home) Usage() Usage {
	u := Usage{Home: h.Dir}
	add := func(path, kind string) {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			u.Files = append(u.Files, UsedFile{Path: path, Kind: kind, Bytes: fi.Size()})
			u.Bytes += fi.Size()
		}
	}
	for _, p := range h.Databases() {
		kind := "database"
		for _, suf := range []string{"wal", "shm", "journal"} {
			if strings.HasSuffix(p, "-"+suf) {
				kind = suf
			}
		}
		add(p, kind)
	}
	entries, _ := os.ReadDir(filepath.Join(h.Dir, MigrationsDir))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pending") {
			add(filepath.Join(h.Dir, MigrationsDir, e.Name()), "migration-journal")
		}
	}
	for _, s := range h.Staged() {
		add(s.Path, "staged-migration")
	}
	sort.SliceStable(u.Files, func(i, j int) bool {
		if u.Files[i].Bytes != u.Files[j].Bytes {
			return u.Files[i].Bytes > u.Files[j].Bytes
		}
		return u.Files[i].Path < u.Files[j].Path
	})
	return u
}

// IsHome reports whether dir looks like a Codex home: a state database,
// the writer-lock directory or .tmp beside sessions/.
func IsHome(dir string) bool { return looksLikeHome(dir) }

// UsageOf measures, once each, the homes dirs and the homes paths are or
// lie in, in the order first named.
func UsageOf(dirs, paths []string) []Usage {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() && IsHome(p) {
			dirs = append(dirs, p)
		} else if h, ok := Of(filepath.Join(p, "x")); ok {
			dirs = append(dirs, h.Dir)
		}
	}
	var out []Usage
	seen := map[string]bool{}
	for _, d := range dirs {
		abs, _ := filepath.Abs(d)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		out = append(out, New(d).Usage())
	}
	return out
}
