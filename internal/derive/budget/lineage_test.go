package budget

import (
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/reconstruct"
)

// TestLineageTokensCountedOnce: replayed with its lineage, each rollout of
// the standard tree contributes the requests of its own records only: a
// fork's inherited prefix lives in its parent's file, and a sub-agent's
// copy of its parent's context is the parent's requests again. So a
// fleet's ledger counts every request once: the sum over the files is the
// number of turns the generator wrote (one request each).
func TestLineageTokensCountedOnce(t *testing.T) {
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, lineagegen.Standard)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, f := range files {
		all = append(all, filepath.Join(dir, f.Path))
	}
	ix := lineage.New(all)
	total, turns := 0, 0
	for _, n := range lineagegen.Standard {
		p := filepath.Join(dir, files[n.Name].Path)
		c := NewCollector()
		ro := reconstruct.ReplayOptions{Ancestry: func() *reconstruct.Ancestry { return ix.Ancestry(p) }}
		st, err := reconstruct.ReplayFile(p, nil, ro, c.Observe)
		if err != nil {
			t.Fatal(err)
		}
		ev := c.Evidence(st)
		own := n.Turns
		if n.Rollback > 0 {
			// The rollback drops the requests of the turns it removes
			// from the file (its own two; the third is its parent's).
			own = max(0, n.Turns-n.Rollback)
		}
		if len(ev.Requests) != own {
			t.Errorf("%s: %d requests, want its own %d", n.Name, len(ev.Requests), own)
		}
		total += len(ev.Requests)
		turns += own
	}
	if total != turns {
		t.Errorf("the tree's files count %d requests, the generator wrote %d", total, turns)
	}
}
