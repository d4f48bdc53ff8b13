package lineage_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/reconstruct"
)

// chainTree is a fork chain of n rollouts whose rollouts compact, roll
// back into what they inherit and fork inside their parent: what each
// replays of its prefix decides its state.
func chainTree(n int) lineagegen.Tree {
	t := lineagegen.Tree{{Name: "n0", Kind: "root", Turns: 3}}
	for i := 1; i < n; i++ {
		nd := lineagegen.Node{Name: fmt.Sprintf("n%d", i), Kind: "fork", Parent: fmt.Sprintf("n%d", i-1), Cut: -1, Turns: 2}
		switch i % 4 {
		case 1:
			nd.Compact = true
		case 2:
			nd.Rollback = 1
		case 3:
			nd.Cut = 1 // inside the parent's own turns
		}
		t = append(t, nd)
	}
	// Siblings continuing a rollout in the middle of the chain.
	return append(t, lineagegen.Node{Name: "side", Kind: "fork", Parent: "n2", Cut: -1, Turns: 1},
		lineagegen.Node{Name: "side-revert", Kind: "revert", Parent: "n3", Cut: 1, Turns: 1})
}

// replayed is what a test compares of a rollout's analysis.
type replayed struct {
	Findings []string
	History  []reconstruct.Item
	Turns    []reconstruct.Turn
	World    string
	Tokens   *reconstruct.TokenInfo
	Records  int
	Lineage  reconstruct.Lineage
}

func analyse(t *testing.T, path string, anc func(string) *reconstruct.Ancestry) replayed {
	t.Helper()
	res, err := checks.Run(path, nil, checks.Options{Lineage: anc})
	if err != nil {
		t.Fatal(err)
	}
	var r replayed
	for _, f := range res.Findings {
		r.Findings = append(r.Findings, fmt.Sprintf("%d %s %s", f.Line, f.Rule, f.Message))
	}
	st := res.State
	r.History = slices.Collect(st.History.All())
	r.Turns, r.Tokens, r.Records, r.Lineage = st.Turns, st.Tokens, st.Records, st.Lineage
	if st.WorldState != nil {
		r.World = st.WorldState.String()
	}
	return r
}

// TestPrefixMemo: with the run's prefix memo (Resolver), every rollout of
// a chain, its side forks, the standard and the compacted trees is
// analysed exactly as without it (Index), whatever order the rollouts
// come in and however often a snapshot is restored.
func TestPrefixMemo(t *testing.T) {
	for name, tree := range map[string]lineagegen.Tree{"chain": chainTree(14), "standard": lineagegen.Standard, "compacted": lineagegen.Compacted} {
		t.Run(name, func(t *testing.T) {
			dir, files := writeTree(t, tree)
			ps := paths(dir, files)
			ix := lineage.New(ps)
			want := map[string]replayed{}
			for _, p := range ps {
				want[p] = analyse(t, p, ix.Ancestry)
			}
			byChain := make([]string, 0, len(tree))
			for _, n := range tree {
				byChain = append(byChain, filepath.Join(dir, files[n.Name].Path))
			}
			reversed := slices.Clone(byChain)
			slices.Reverse(reversed)
			for order, seq := range map[string][]string{"chain": byChain, "reversed": reversed, "twice": append(slices.Clone(byChain), byChain...)} {
				r := lineage.NewResolver(ix)
				for _, p := range seq {
					if diff := cmp.Diff(want[p], analyse(t, p, r.Ancestry), cmp.AllowUnexported(reconstruct.Item{})); diff != "" {
						t.Errorf("%s order, %s: memoized analysis differs (-without +with memo):\n%s", order, filepath.Base(p), diff)
					}
				}
			}
		})
	}
}
