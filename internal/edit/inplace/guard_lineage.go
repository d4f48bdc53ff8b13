package inplace

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/rollout"
)

// A rollout another one continues is immutable: a paginated fork or revert
// names it in its history_base and inherits its bytes up to a cutoff,
// without a copy (docs/lineage.md). Codex never rewrites such a rollout:
// its compression skips every referenced rollout and every fork pointer
// (reference_count > 0, history_base.is_some(): codex-rs/rollout/src/
// compression.rs, #34566), its deletion refuses one (#38292). Every write
// of rollout's (repair --write, reclaim --write, both undos) refuses
// through this guard to change a byte below a cutoff another rollout of the
// home names: the fork would then inherit other bytes, or a cutoff past
// its source's end, which Codex refuses.

// Reference is a rollout that continues another: its path and rollout id,
// and End, the history_base.end_byte_offset of its cutoff.
type Reference struct {
	Path      string
	RolloutID string
	End       int64
}

// References are the rollouts whose history_base names the rollout at
// path, found over its whole Codex home (sessions/ and archived_sessions/,
// as Codex's RolloutReferenceIndex scans it) or, for a file outside a home,
// among the rollouts beside it.
func References(path string) []Reference {
	c := referenceIndex(path)
	m, err := rollout.ReadMeta(path)
	id := rolloutID(path, m)
	if err != nil || id == "" {
		return nil
	}
	return slices.Clone(c.referencedBy(strings.ToLower(id)))
}

// CheckReferences refuses (Referenced) a write that changes the bytes of
// path from byte from on when a rollout continues it past that byte (from:
// the offset of the first byte that changes, in the file's decompressed
// bytes; 0 for the whole file).
func CheckReferences(path string, from int64) *Refusal {
	var hit []Reference
	for _, r := range References(path) {
		if r.End > from {
			hit = append(hit, r)
		}
	}
	if len(hit) == 0 {
		return nil
	}
	names := make([]string, len(hit))
	for i, r := range hit {
		names[i] = fmt.Sprintf("%s (up to byte %d)", r.Path, r.End)
	}
	return Refuse(Referenced, path, "%s is continued by %s: its history_base inherits these bytes without a copy, and changing them from byte %d on would break it (Codex refuses a cutoff past its source's end, and resumes other history for a cutoff whose bytes changed)",
		path, strings.Join(names, ", "), from)
}

// The reference index of a home (or directory) is kept for the rest of
// the run while the set of its rollout files stays the same: Codex never
// adds a history_base to an existing file (a fork or revert is a new file),
// so a new reference always comes with a new name. A fork made in between
// is seen by the writer lock the guard probes, which Codex holds on a
// source while it makes a fork reference it.
var refIndexes struct {
	sync.Mutex
	m map[string]refIndex
}

type refIndex struct {
	names uint64   // hash of the file names
	stamp dirStamp // vouches for the names without listing them again
	refs  *refMap
}

// refMap is, per rollout id, the rollouts whose history_base names it, in
// the order of the files (lineage.Index.ReferencedBy's answer). It keeps
// only those references: an index of the files would keep a rollout per
// file, and every head it read, about 550 bytes a rollout, 27 MB for a
// home of 50,000; the file list itself goes once they are read.
type refMap struct {
	once  sync.Once
	files []string
	by    map[string][]Reference
}

func (c refIndex) referencedBy(id string) []Reference {
	c.refs.once.Do(func() {
		c.refs.by = map[string][]Reference{}
		for _, p := range c.refs.files {
			m, err := rollout.ReadMeta(p)
			id := rolloutID(p, m)
			if err != nil || m.Base == nil || m.Base.RolloutID == "" || m.Base.RolloutID == id {
				continue
			}
			c.refs.by[m.Base.RolloutID] = append(c.refs.by[m.Base.RolloutID], Reference{Path: p, RolloutID: id, End: m.Base.EndOffset})
		}
		c.refs.files = nil
	})
	return c.refs.by[id]
}

// rolloutID is the rollout id Codex finds the file at path by: its name's,
// else (a file not named as Codex names rollouts) its session_meta's id,
// as lineage.Rollout names it.
func rolloutID(path string, m rollout.Meta) string {
	if n, ok := rollout.ParseName(path); ok && n.Rollout != "" {
		return n.Rollout
	}
	return m.ThreadID
}

func referenceIndex(path string) refIndex {
	dir, inHome := home.Layout(path)
	roots := []string{filepath.Join(dir, home.SessionsDir), filepath.Join(dir, home.ArchivedSessionsDir)}
	if !inHome {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		dir = filepath.Dir(abs)
		roots = []string{dir}
	}
	refIndexes.Lock()
	c, ok := refIndexes.m[dir]
	refIndexes.Unlock()
	if ok && c.stamp.unchanged() {
		return c
	}
	stamp := stampDirs(roots, inHome)
	var files []string
	if inHome {
		files = lineage.HomeFiles(dir)
	} else {
		files = siblings(dir)
	}
	h := fnv.New64a()
	for _, f := range files {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	sum := h.Sum64()
	refIndexes.Lock()
	defer refIndexes.Unlock()
	if c, ok := refIndexes.m[dir]; ok && c.names == sum {
		c.stamp = stamp
		refIndexes.m[dir] = c
		return c
	}
	c = refIndex{sum, stamp, &refMap{files: slices.DeleteFunc(files, func(p string) bool { return p == rollout.StdinPath })}}
	if refIndexes.m == nil {
		refIndexes.m = map[string]refIndex{}
	}
	refIndexes.m[dir] = c
	return c
}

// siblings are the rollout files directly in dir.
func siblings(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "rollout-") && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".jsonl.zst")) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// FirstDifference is the offset of the first byte at which the
// decompressed contents of two rollouts differ (the length of the shorter
// when one is a prefix of the other; -1 when they are the same): what an
// undo changes of the file it puts the original back over.
func FirstDifference(a, b string) (int64, error) {
	f, err := os.Open(b)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return FirstDifferenceFrom(a, f)
}

// FirstDifferenceFrom is FirstDifference with b already open (a backup
// opened relative to the store directory that was checked).
func FirstDifferenceFrom(a string, b *os.File) (int64, error) {
	fa, err := rollout.Open(a, nil)
	if err != nil {
		return 0, err
	}
	defer fa.Close()
	fb, _, err := rollout.DecodeWith(b.Name(), b, rollout.OpenOptions{})
	if err != nil {
		return 0, err
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 64<<10), bufio.NewReaderSize(fb, 64<<10)
	var off int64
	for {
		x, errA := ra.ReadByte()
		y, errB := rb.ReadByte()
		switch {
		case errA == io.EOF && errB == io.EOF:
			return -1, nil
		case errA == io.EOF || errB == io.EOF:
			return off, nil
		case errA != nil:
			return 0, errA
		case errB != nil:
			return 0, errB
		case x != y:
			return off, nil
		}
		off++
	}
}
