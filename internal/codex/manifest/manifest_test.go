package manifest

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Two lineages: a root with a fork and a fork of the fork (plus a revert),
// and a lone root with a sub-agent (a sub-agent continues no rollout: its
// own lineage).
var trees = lineagegen.Tree{
	{Name: "a", Kind: "root", Turns: 2},
	{Name: "a-fork", Kind: "fork", Parent: "a", Cut: 1, Turns: 1},
	{Name: "a-fork-fork", Kind: "fork", Parent: "a-fork", Cut: -1, Turns: 1},
	{Name: "a-revert", Kind: "revert", Parent: "a", Cut: 1, Turns: 1},
	{Name: "b", Kind: "root", Turns: 1},
	{Name: "b-sub", Kind: "subagent", Parent: "b", Cut: -1, Turns: 1},
}

func planned(t *testing.T) (map[string]*lineagegen.File, []Entry, []string) {
	t.Helper()
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, trees)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f.Path = filepath.Join(dir, f.Path)
	}
	d, err := rollout.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return files, Plan(context.Background(), d.Paths, 3), d.Paths
}

// The plan records what the heads say, and each rollout's lineage root is
// the rollout id at the top of its chain of forks and reverts: the key
// lineage.Select shards by when it reads the heads itself.
func TestPlanRoots(t *testing.T) {
	files, entries, paths := planned(t)
	byPath := map[string]Entry{}
	for _, e := range entries {
		byPath[e.URI] = e
	}
	root := map[string]string{"a": "a", "a-fork": "a", "a-fork-fork": "a", "a-revert": "a", "b": "b", "b-sub": "b-sub"}
	for name, f := range files {
		e, ok := byPath[f.Path]
		if !ok {
			t.Fatalf("%s (%s) not planned", name, f.Path)
		}
		if want := files[root[name]].Rollout; e.LineageRoot != want {
			t.Errorf("%s: lineage_root %s, want %s (%s)", name, e.LineageRoot, want, root[name])
		}
		if e.ThreadID != f.Thread || e.RolloutID != f.Rollout || e.Size != f.Size || e.Modified.IsZero() || e.Error != "" {
			t.Errorf("%s: entry %+v, want thread %s rollout %s size %d", name, e, f.Thread, f.Rollout, f.Size)
		}
	}
	keys := lineage.New(paths).ShardKeys(paths)
	for _, e := range entries {
		if keys[e.URI] != e.LineageRoot {
			t.Errorf("%s: manifest key %s, lineage.Select's %s", filepath.Base(e.URI), e.LineageRoot, keys[e.URI])
		}
	}
}

// Written and read back, a shard's slice holds whole lineages, every entry
// is in exactly one shard, and the slice's index resolves a fork's chain
// as an index that reads the files does.
func TestReadShards(t *testing.T) {
	files, entries, paths := planned(t)
	var buf bytes.Buffer
	if err := Write(&buf, []string{"src"}, entries); err != nil {
		t.Fatal(err)
	}
	h, all, err := Read("-", bytes.NewReader(buf.Bytes()), nil)
	if err != nil || h.Count != len(entries) || h.Version != Version || len(all) != len(entries) {
		t.Fatalf("read back: header %+v, %d entries, %v", h, len(all), err)
	}
	seen := 0
	for k := 1; k <= 3; k++ {
		_, part, err := Read("-", bytes.NewReader(buf.Bytes()), &shard.Spec{K: k, N: 3})
		if err != nil {
			t.Fatal(err)
		}
		seen += len(part)
		roots := map[string]bool{}
		for _, e := range part {
			roots[e.LineageRoot] = true
		}
		for _, e := range entries {
			if roots[e.LineageRoot] && !slices.ContainsFunc(part, func(p Entry) bool { return p.URI == e.URI }) {
				t.Errorf("shard %d/3 has lineage %s but not %s", k, e.LineageRoot, e.URI)
			}
		}
	}
	if seen != len(entries) {
		t.Errorf("the shards hold %d entries, the manifest %d", seen, len(entries))
	}
	fork := files["a-fork-fork"].Path
	want := lineage.New(paths).Ancestry(fork)
	got := Index(all).Ancestry(fork)
	if want == nil || got == nil || len(got.Segments) != 2 || !slices.Equal(segPaths(got), segPaths(want)) {
		t.Errorf("ancestry from the manifest %v, from the files %v", got, want)
	}
}

func segPaths(a *reconstruct.Ancestry) []string {
	var out []string
	for _, s := range a.Segments {
		out = append(out, s.Path)
	}
	return out
}

func TestReadRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"empty":        "",
		"not one":      `{"uri":"x"}` + "\n",
		"newer":        `{"format":"rollout-manifest","version":9}` + "\n",
		"bad entry":    `{"format":"rollout-manifest","version":1}` + "\n" + "nope\n",
		"entry no uri": `{"format":"rollout-manifest","version":1}` + "\n" + `{"size":1}` + "\n",
	} {
		if _, _, err := Read("-", strings.NewReader(text), nil); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
