package lineage

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/rollout"
)

// Selection is what a command that reads many rollouts reads: the walk of
// its inputs, then the part of it a shard takes.
type Selection struct {
	// Discovery is what the walk found, without duplicates, less what
	// other shards take.
	rollout.Discovery
	// All are the rollouts found before the shard took its part: where
	// the lineages of Paths are looked up.
	All []string
	// Index has the lineages of All when the shard needed them (nil
	// without a shard).
	Index *Index
	// Empty are the inputs that hold no rollout (rollout.ErrNoRollouts): a
	// note, not an error (a fresh Codex install has an empty sessions/).
	Empty []error
}

// Select walks inputs, one at a time so that an input without rollouts is
// only noted, and keeps the rollouts of shard part (nil: all). A lineage
// stays in one shard: it is sharded by its root (Index.ShardKeys); what
// the walk could not use or skipped is sharded by path. The error is a
// walk's (an input that cannot be read).
func Select(inputs []string, part *shard.Spec) (*Selection, error) {
	sel := &Selection{}
	seen := map[string]bool{}
	for _, p := range inputs {
		got, err := rollout.Discover([]string{p})
		if errors.Is(err, rollout.ErrNoRollouts) {
			sel.Empty = append(sel.Empty, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, f := range got.Paths {
			if !seen[f] {
				seen[f] = true
				sel.Paths = append(sel.Paths, f)
			}
		}
		sel.Unusable = append(sel.Unusable, got.Unusable...)
		sel.Ignored = append(sel.Ignored, got.Ignored...)
	}
	sel.All = sel.Paths
	if part != nil {
		sel.Index = New(sel.All)
		keys := sel.Index.ShardKeys(sel.All)
		sel.Paths = slices.DeleteFunc(slices.Clone(sel.All), func(p string) bool { return !part.Contains(keys[p]) })
		sel.Unusable = slices.DeleteFunc(sel.Unusable, func(e *rollout.WalkError) bool { return !part.Contains(e.Path) })
		sel.Ignored = slices.DeleteFunc(sel.Ignored, func(p string) bool { return !part.Contains(p) })
	}
	return sel, nil
}

// Notes say what the selection found besides rollouts: the inputs that
// hold none, then which *.jsonl files the walk skipped (the first ten).
func (s *Selection) Notes() []string {
	var notes []string
	for _, err := range s.Empty {
		notes = append(notes, err.Error())
	}
	const listed = 10
	for i, p := range s.Ignored {
		if i == listed {
			notes = append(notes, fmt.Sprintf("and %d more *.jsonl files not named rollout-* were skipped", len(s.Ignored)-listed))
			break
		}
		notes = append(notes, fmt.Sprintf("skipped %s: not named rollout-*.jsonl (name it to verify it)", p))
	}
	return notes
}
