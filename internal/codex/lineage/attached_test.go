package lineage

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// find on the home Codex 0.171.0 made with a side conversation
// (fixtures/home/base/codex-0.171.0-attached): the parent's search lists
// the attached thread through the threads table; the attached thread's
// lists the parent as the history it continues, marked as its parent.
func TestWithAttached(t *testing.T) {
	dir := t.TempDir()
	if err := homegen.Build(dir, homegen.Attached); err != nil {
		t.Fatal(err)
	}
	h := home.New(dir)
	rolloutOf := func(id string) string {
		ms, err := h.FindThread(id)
		if err != nil || len(ms) != 1 {
			t.Fatalf("FindThread(%s) = %v, %v", id, ms, err)
		}
		return ms[0].Path
	}
	parent, child := rolloutOf(homegen.AttachedParent), rolloutOf(homegen.AttachedChild)
	type row struct {
		Path, Thread, AttachedTo, ParentOf string
		Via, Inherited                     bool
	}
	rows := func(query string) []row {
		ms, err := h.FindThread(query)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, f := range WithAttached(Expand(ms, h.RolloutDirs()), h) {
			out = append(out, row{filepath.Base(f.Path), f.ThreadID, f.AttachedTo, f.ParentOf, f.ViaAttachment, f.Inherited})
		}
		return out
	}
	for _, tt := range []struct {
		query string
		want  []row
	}{
		{homegen.AttachedParent, []row{
			{Path: filepath.Base(parent), Thread: homegen.AttachedParent},
			{Path: filepath.Base(child), Thread: homegen.AttachedChild, AttachedTo: homegen.AttachedParent, Via: true},
		}},
		{homegen.AttachedChild, []row{
			{Path: filepath.Base(child), Thread: homegen.AttachedChild, AttachedTo: homegen.AttachedParent},
			{Path: filepath.Base(parent), Thread: homegen.AttachedParent, ParentOf: homegen.AttachedChild, Inherited: true},
		}},
	} {
		if diff := cmp.Diff(tt.want, rows(tt.query)); diff != "" {
			t.Errorf("find %s (-want +got):\n%s", tt.query, diff)
		}
	}

	// A home whose index has no attached thread (and one without an index)
	// lists what Expand lists.
	plain := t.TempDir()
	if err := homegen.Build(plain, homegen.Base); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{plain, t.TempDir()} {
		ph := home.New(d)
		ms, _ := ph.FindThread(homegen.Thread)
		want := Expand(ms, ph.RolloutDirs())
		if diff := cmp.Diff(want, WithAttached(want, ph)); diff != "" {
			t.Errorf("%s: WithAttached changed a home without attached threads:\n%s", d, diff)
		}
	}
}
