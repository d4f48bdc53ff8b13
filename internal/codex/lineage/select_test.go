package lineage_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/rollout"
)

// TestSelect: the shards of a walk partition its rollouts, each lineage
// whole in one shard; an input naming a file twice reads it once, and an
// empty directory is a note.
func TestSelect(t *testing.T) {
	dir, files := writeTree(t, lineagegen.Standard)
	empty := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(dir, files["parent"].Path)
	all, err := lineage.Select([]string{dir, parent, empty}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all.Paths), len(files); got != want || all.Index != nil {
		t.Errorf("no shard: %d rollouts (index %v), want %d once each and no index", got, all.Index != nil, want)
	}
	if len(all.Empty) != 1 || !errors.Is(all.Empty[0], rollout.ErrNoRollouts) {
		t.Errorf("Empty = %v, want the empty directory's ErrNoRollouts", all.Empty)
	}
	shardOf := map[string]int{}
	for k := 1; k <= 3; k++ {
		sel, err := lineage.Select([]string{dir}, &shard.Spec{K: k, N: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sel.All, all.Paths) || sel.Index == nil {
			t.Errorf("shard %d/3: All = %d rollouts (index %v), want every rollout found and an index", k, len(sel.All), sel.Index != nil)
		}
		for _, p := range sel.Paths {
			if _, dup := shardOf[p]; dup {
				t.Errorf("%s in two shards", p)
			}
			shardOf[p] = k
		}
	}
	if len(shardOf) != len(files) {
		t.Errorf("the shards hold %d rollouts, want %d", len(shardOf), len(files))
	}
	for _, name := range []string{"fork", "fork2", "revert"} {
		if got, want := shardOf[filepath.Join(dir, files[name].Path)], shardOf[parent]; got != want {
			t.Errorf("%s in shard %d, its root parent in %d", name, got, want)
		}
	}
}
