package lineage

import (
	"fmt"
	"slices"
	"sync"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Chain is the lineage of one rollout as resolved from an index.
type Chain struct {
	// Ancestry is what the replay takes: the segments, root first, or
	// the problems that stop the chain. Nil when the rollout continues no
	// other (it has no history_base).
	Ancestry *reconstruct.Ancestry
	// Absent is the rollout id of a source that is not in the index,
	// which does not cover the home it would be in: the chain is unknown,
	// not broken (a note for the user, never a finding).
	Absent string
	// Links are the rollouts of the chain found, the file itself first.
	Links []*Rollout
}

// Note says why a chain with an absent source was not followed ("" when
// none is absent).
func (c Chain) Note(path string) string {
	if c.Absent == "" {
		return ""
	}
	via := ""
	if len(c.Links) > 1 {
		via = fmt.Sprintf(" (through %s)", c.Links[len(c.Links)-1].Path)
	}
	return fmt.Sprintf("%s continues rollout %s%s, which is not among the rollouts read: its lineage was not replayed", path, c.Absent, via)
}

// Resolve follows the history_base chain of the rollout at path, as
// Codex does on resume: by rollout id, each source once, checking each
// link in Codex's order (the source exists, has not been seen, is of the
// same thread when it must be, is paginated, and the cutoff does not
// include its session_meta). The cutoffs' byte offsets are checked by the
// replay, which reads the sources (reconstruct.Ancestry).
func (ix *Index) Resolve(path string) Chain {
	if path == rollout.StdinPath {
		return Chain{}
	}
	self := ix.Of(path)
	m, err := self.Meta()
	if err != nil || m.Base == nil {
		return Chain{}
	}
	c := Chain{Links: []*Rollout{self}}
	fail := func(ev reconstruct.Evidence) Chain {
		c.Ancestry = &reconstruct.Ancestry{Problems: []reconstruct.Evidence{ev}}
		return c
	}
	seen := map[string]bool{self.ID: true}
	var segs []reconstruct.Segment
	var warnings []reconstruct.Evidence // what Codex reads all the same
	cur, curMeta := self, m
	for curMeta.Base != nil {
		b := curMeta.Base
		via := ""
		if cur != self {
			via = cur.Path
		}
		if b.Malformed != "" {
			return fail(reconstruct.LineageMalformedBaseEvidence{Field: b.Malformed, Via: via})
		}
		src := ix.Lookup(b.RolloutID)
		if src == nil {
			if !ix.Covers(cur.Path) {
				c.Absent = b.RolloutID
				return c
			}
			return fail(reconstruct.LineageMissingSourceEvidence{RolloutID: b.RolloutID, Via: via})
		}
		if seen[src.ID] {
			return fail(reconstruct.LineageCycleEvidence{RolloutID: b.RolloutID, Via: via, NameLostRollout: src == self && ix.lostRolloutSuffix(self)})
		}
		seen[src.ID] = true
		c.Links = append(c.Links, src)
		sm, err := src.Meta()
		if err != nil || !sm.Found {
			// Codex cannot read the source's session_meta: it fails as it
			// does for any unreadable rollout. The replay says why.
			segs = append(segs, reconstruct.Segment{Path: src.Path, RolloutID: src.ID, End: b.EndOffset, EndOrdinal: b.EndOrdinal, Via: via})
			cur, curMeta = src, rollout.Meta{}
			continue
		}
		// 0.147 found a source by thread id and checked its session_meta
		// against it; 0.148 and later find it by rollout id and do not
		// (measured with 0.153.4 and 0.171.0: a source whose session_meta
		// names another thread than its file name is read).
		if src.Name.Thread != "" && sm.ThreadID != "" && src.Name.Thread != sm.ThreadID {
			warnings = append(warnings, reconstruct.LineageOtherThreadEvidence{Source: src.Path, NameThread: src.Name.Thread, MetaThread: sm.ThreadID, Via: via})
		}
		if sm.HistoryMode != rollout.HistoryPaginated {
			return fail(reconstruct.LineageNotPaginatedEvidence{Source: src.Path, HistoryMode: sm.HistoryMode, Via: via})
		}
		if b.EndOrdinal == 0 {
			return fail(reconstruct.LineageCutoffIncludesMetaEvidence{Source: src.Path, Via: via})
		}
		segs = append(segs, reconstruct.Segment{Path: src.Path, RolloutID: src.ID, End: b.EndOffset, EndOrdinal: b.EndOrdinal, Via: via})
		cur, curMeta = src, sm
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	c.Ancestry = &reconstruct.Ancestry{Segments: segs, Problems: warnings}
	return c
}

// Ancestry is Resolve(path).Ancestry: what a replay of the file takes
// (checks.Options.Lineage).
func (ix *Index) Ancestry(path string) *reconstruct.Ancestry { return ix.Resolve(path).Ancestry }

// Resolver is an Index in use by a run: it resolves the lineage of each
// rollout replayed and keeps the notes of the chains it could not follow
// (Chain.Note). Safe for concurrent use, as a run replays files in
// parallel.
type Resolver struct {
	ix    *Index
	mu    sync.Mutex
	notes map[string]bool
	memo  *reconstruct.PrefixMemo // the run's replayed prefixes (memoized)
}

// NewResolver resolves through ix.
func NewResolver(ix *Index) *Resolver {
	return &Resolver{ix: ix, notes: map[string]bool{}, memo: reconstruct.NewPrefixMemo(0)}
}

// Ancestry is Index.Ancestry, noting a chain not followed.
func (r *Resolver) Ancestry(path string) *reconstruct.Ancestry {
	c := r.ix.Resolve(path)
	if n := c.Note(path); n != "" {
		r.mu.Lock()
		r.notes[n] = true
		r.mu.Unlock()
	}
	return r.memoized(c.Ancestry)
}

// memoized is a with the run's prefix memo: a chain replayed for one
// rollout is not replayed again for the rollouts that continue it, so a
// fork chain costs its length, not its square (issue 38).
func (r *Resolver) memoized(a *reconstruct.Ancestry) *reconstruct.Ancestry {
	if a == nil || len(a.Segments) == 0 {
		return a
	}
	m := *a
	m.Memo = r.memo
	return &m
}

// Notes are the chains not followed so far, sorted.
func (r *Resolver) Notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.notes))
	for n := range r.notes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// lostRolloutSuffix: self, which names itself, is a reverted thread's
// file whose name lost its _<rollout> suffix: its name carries only the
// thread id, and another rollout of that thread (the one the revert
// continues) is in the index. A fork that names itself has none.
func (ix *Index) lostRolloutSuffix(self *Rollout) bool {
	if self.Name.Thread == "" || self.Name.Reverted() {
		return false
	}
	for _, r := range ix.Rollouts() {
		if r != self && r.Name.Thread == self.Name.Thread {
			return true
		}
	}
	return false
}
