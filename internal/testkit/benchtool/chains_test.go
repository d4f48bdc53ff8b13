package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

// TestChainTree: a chain of n is n rollouts, each but the root continuing
// the whole of the one before, so that a rollout at depth k replays k
// segments; each verifies clean.
func TestChainTree(t *testing.T) {
	const n = 6
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, chainTree(n))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != n {
		t.Fatalf("%d rollouts, want %d", len(files), n)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f.Path))
	}
	ix := lineage.New(paths)
	for name, f := range files {
		p := filepath.Join(dir, f.Path)
		a := ix.Ancestry(p)
		depth := 0
		if a != nil {
			depth = len(a.Segments)
		}
		var k int
		if _, err := fmt.Sscanf(name, "n%d", &k); err != nil || depth != k {
			t.Errorf("%s replays %d segments, want %d", name, depth, k)
		}
		res, err := checks.Run(p, nil, checks.Options{Lineage: ix.Ancestry})
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range res.Findings {
			t.Errorf("%s: line %d: %s: %s", name, fd.Line, fd.Rule, fd.Message)
		}
	}
}
