package space

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/rollout"
)

// Files whose parent links form a cycle are one tree (package forest's
// rule, Codex's), whatever the order they were added in; a file whose
// parent was not read roots its own tree.
func TestTreesCycle(t *testing.T) {
	t.Parallel()
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		files := []*File{
			{Path: "b", ThreadID: "b", ParentThreadID: "c", DiskBytes: 1},
			{Path: "c", ThreadID: "c", ParentThreadID: "b", DiskBytes: 2},
			{Path: "d", ThreadID: "d", ParentThreadID: "c", DiskBytes: 4},
			{Path: "e", ThreadID: "e", ParentThreadID: "gone", DiskBytes: 8},
		}
		s := NewSummary(10)
		for _, i := range order {
			s.Add(files[i], nil)
		}
		trees := s.Trees()
		if len(trees) != 1 || trees[0].Root.Path != "b" || trees[0].Files != 3 || trees[0].DiskBytes != 7 {
			t.Errorf("order %v: trees %+v, want one rooted at b with 3 files and 7 bytes", order, trees)
		}
	}
}

// The rollouts Codex 0.171.0 made for a side conversation (the conformance
// golden "attached": a parent and a thread attached to it with thread/fork
// {attachToSource}) are one tree: the attached thread's session_meta says
// attached_thread and names its parent in forked_from_id. Without that
// mark, the threads index's edge (Attach) makes the same tree.
func TestTreesAttached(t *testing.T) {
	t.Parallel()
	golden := filepath.Join("..", "..", "testkit", "conformance", "testdata", "0.171.0", "attached")
	paths, err := filepath.Glob(filepath.Join(golden, "session", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if err != nil || len(paths) != 2 {
		t.Fatalf("the attached golden's two rollouts: %v %v", paths, err)
	}
	// The golden names the thread the scenario started (the parent) and
	// the rollout the oracle resumed (the attached thread's).
	var g struct {
		ID     string `json:"id"`
		Judged string `json:"judged"`
	}
	if b, err := os.ReadFile(filepath.Join(golden, "golden.json")); err != nil || json.Unmarshal(b, &g) != nil {
		t.Fatalf("the attached golden: %v", err)
	}
	parent := g.ID
	child, ok := rollout.ThreadIDFromName(g.Judged)
	if !ok || child == parent {
		t.Fatalf("the attached golden judges %s, not the attached thread", g.Judged)
	}
	read := func() []*File {
		var out []*File
		for _, p := range paths {
			f, _, err := ReadFile(p, nil, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f.Path = p
			out = append(out, f)
		}
		return out
	}
	files := read()
	if files[0].ThreadID != parent || files[0].AttachedTo != "" || files[1].ThreadID != child || files[1].AttachedTo != parent {
		t.Fatalf("threads %s attached to %q, %s attached to %q; want %s attached to %s",
			files[0].ThreadID, files[0].AttachedTo, files[1].ThreadID, files[1].AttachedTo, child, parent)
	}
	check := func(s *Summary, how string) {
		trees := s.Trees()
		if len(trees) != 1 || trees[0].Root.ThreadID != parent || trees[0].Files != 2 {
			t.Errorf("%s: trees %+v, want one rooted at %s with 2 files", how, trees, parent)
		}
	}
	s := NewSummary(10)
	for _, f := range files {
		s.Add(f, nil)
	}
	check(s, "session_meta")

	s = NewSummary(10)
	for _, f := range read() {
		f.AttachedTo = ""
		s.Add(f, nil)
	}
	if len(s.Trees()) != 0 {
		t.Fatalf("without an edge: trees %+v, want none", s.Trees())
	}
	s.Attach(map[string]string{child: parent})
	check(s, "threads index")
}
