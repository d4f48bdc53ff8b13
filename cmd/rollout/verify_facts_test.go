package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

// fileFacts are the facts of a file in the JSON report.
type fileFacts struct {
	Path        string `json:"path"`
	RolloutID   string `json:"rollout_id"`
	LineageRoot string `json:"lineage_root"`
	Bytes       int64  `json:"bytes"`
	Turns       int    `json:"turns"`
	Compactions int    `json:"compactions"`
}

// The facts verify reports of each file of lineage trees, against what
// the generator wrote: the rollout id, the root of its lineage, its size
// as stored (compressed for .zst), its own turns and compactions.
func TestVerifyFileFacts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tree lineagegen.Tree
		// root names each node's lineage root; turns and compactions are
		// the node's own.
		root        map[string]string
		compactions map[string]int
	}{
		{"standard", lineagegen.Standard, map[string]string{"parent": "parent", "fork": "parent", "fork2": "parent",
			"revert": "parent", "archived": "archived", "archived-fork": "archived", "zst": "zst", "zst-fork": "zst",
			"subagent": "subagent"}, nil},
		{"compacted", lineagegen.Compacted, map[string]string{"parent": "parent", "fork": "parent"},
			map[string]int{"parent": 3, "fork": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			files, err := lineagegen.Write(home, tc.tree)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range files {
				paths = append(paths, filepath.Join(home, f.Path))
			}
			_, out := runCLI(t, append([]string{"verify", "--fail-on", "never", "--format", "json"}, paths...)...)
			var rep struct{ Files []fileFacts }
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatal(err)
			}
			got := map[string]fileFacts{}
			for _, f := range rep.Files {
				got[f.Path] = f
			}
			for name, f := range files {
				path := filepath.Join(home, f.Path)
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				turns := f.Node.Turns
				if f.Node.Kind == "subagent" {
					turns += f.Node.Cut // its inherited turns are records of its own file
				}
				want := fileFacts{Path: path, RolloutID: f.Rollout, LineageRoot: files[tc.root[name]].Rollout,
					Bytes: fi.Size(), Turns: turns, Compactions: tc.compactions[name]}
				if diff := cmp.Diff(want, got[path]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// tokens is the cumulative total of the last token_count: basic.jsonl's
// last total_token_usage.total_tokens is 477000; it records 4 turns
// (task_started) and 2 compacted records.
func TestVerifyFileFactsTokens(t *testing.T) {
	t.Parallel()
	_, out := runCLI(t, "verify", "--fail-on", "never", "--format", "json", budgetFixtures+"basic.jsonl")
	var rep struct {
		Files []struct {
			Tokens      int64 `json:"tokens"`
			Turns       int   `json:"turns"`
			Compactions int   `json:"compactions"`
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Files) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	if f := rep.Files[0]; f.Tokens != 477000 || f.Turns != 4 || f.Compactions != 2 {
		t.Errorf("tokens %d, turns %d, compactions %d; want 477000, 4, 2", f.Tokens, f.Turns, f.Compactions)
	}
}
