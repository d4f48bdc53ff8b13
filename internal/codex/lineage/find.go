package lineage

import (
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/rollout"
)

// Found is a rollout of a thread search: a match, or a rollout of a
// match's lineage.
type Found struct {
	rollout.ThreadMatch
	// Current marks the current rollout of a thread that has several
	// (home.Current).
	Current bool
	// Inherited is set for a rollout of the lineage: the rollout
	// ContinuedBy continues it up to byte UpTo.
	Inherited   bool
	ContinuedBy string
	UpTo        int64
}

// ForFile indexes for a command that reads one rollout: its home, and its
// own directory, so that a fork copied next to its parent resolves.
func ForFile(path string) *Index {
	if path == rollout.StdinPath {
		return New(nil)
	}
	if objstore.IsURI(path) {
		return New([]string{path}, path[:strings.LastIndex(path, "/")+1])
	}
	return New([]string{path}, filepath.Dir(path))
}

// Expand is matches, a thread's current rollout first when it has
// several (a reverted thread), each followed by the rollouts of its
// lineage (nearest first) not listed yet: the threads' predecessors,
// looked up in the rollout directories dirs as Codex does.
func Expand(matches []rollout.ThreadMatch, dirs []string) []Found {
	paths := make([]string, 0, len(matches))
	for _, m := range matches {
		paths = append(paths, m.Path)
	}
	return ExpandIn(New(paths, dirs...), matches)
}

// ExpandIn is Expand with the lineages looked up in ix (a manifest's).
func ExpandIn(ix *Index, matches []rollout.ThreadMatch) []Found {
	seen := map[string]bool{}
	for _, m := range matches {
		seen[m.Path] = true
	}
	var out []Found
	for _, f := range currentFirst(matches) {
		out = append(out, f)
		c := ix.Resolve(f.Path)
		for i := 1; i < len(c.Links); i++ {
			r := c.Links[i]
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			meta, _ := r.Meta()
			child, _ := c.Links[i-1].Meta()
			out = append(out, Found{
				ThreadMatch: rollout.ThreadMatch{Path: r.Path, ThreadID: meta.ThreadID, NameID: r.Name.Thread, MetaID: meta.ThreadID},
				Inherited:   true, ContinuedBy: c.Links[i-1].ID, UpTo: child.Base.EndOffset,
			})
		}
	}
	return out
}

// currentFirst groups matches by thread, in the order the threads first
// appear, and puts the current rollout of a thread that has several
// first, marked Current.
func currentFirst(matches []rollout.ThreadMatch) []Found {
	byThread := map[string][]rollout.ThreadMatch{}
	var threads []string
	for _, m := range matches {
		t := strings.ToLower(m.ThreadID)
		if _, ok := byThread[t]; !ok {
			threads = append(threads, t)
		}
		byThread[t] = append(byThread[t], m)
	}
	out := make([]Found, 0, len(matches))
	for _, t := range threads {
		ms := byThread[t]
		cur, ok := home.Current(ms)
		if !ok || len(ms) == 1 {
			cur = ""
		}
		for _, m := range ms {
			if m.Path == cur {
				out = append(out, Found{ThreadMatch: m, Current: true})
			}
		}
		for _, m := range ms {
			if m.Path != cur {
				out = append(out, Found{ThreadMatch: m})
			}
		}
	}
	return out
}
