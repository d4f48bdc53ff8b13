package repair

import (
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/reconstruct"
)

// lineageProblems is what Codex refuses in the chain of the rollout at
// path (a fork whose source was deleted): no fix of the file mends it, but
// it remains, as verify reports it, and the repair must say so. Only the
// problems: the inherited prefix is not replayed, so the file's own
// analysis and plan are what they are without them. The replay asks only
// for a file whose session_meta has a history_base.
func lineageProblems(path string) *reconstruct.Ancestry {
	a := lineage.ForFile(path).Ancestry(path)
	if a == nil || len(a.Problems) == 0 {
		return nil
	}
	return &reconstruct.Ancestry{Problems: a.Problems}
}
