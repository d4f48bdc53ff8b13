package inplace_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// A thread with a side conversation attached (the home Codex 0.171.0 made
// with thread/fork {attachToSource}) is protected as a fork source: the
// attached thread is a paginated fork whose history_base inherits the
// parent's bytes up to its cutoff, so the guard refuses to change them,
// and allows a change past the cutoff. The threads row's
// attached_thread_parent_id adds nothing to protect: Codex reads the
// parent's file for the attached thread through the history_base only.
func TestAttachedThreadProtectsParent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex-home")
	if err := homegen.Build(dir, homegen.Attached); err != nil {
		t.Fatal(err)
	}
	h := home.New(dir)
	pathOf := func(id string) string {
		ms, err := h.FindThread(id)
		if err != nil || len(ms) != 1 {
			t.Fatalf("FindThread(%s) = %v, %v", id, ms, err)
		}
		return ms[0].Path
	}
	parent, child := pathOf(homegen.AttachedParent), pathOf(homegen.AttachedChild)
	refs := inplace.References(parent)
	if len(refs) != 1 || refs[0].Path != child || refs[0].End != 17598 {
		t.Fatalf("References(parent) = %+v, want the attached thread up to byte 17598", refs)
	}
	r := inplace.CheckReferences(parent, 100)
	if r == nil || r.Kind != inplace.Referenced || !strings.Contains(r.Error(), child) {
		t.Fatalf("a change at byte 100 of the parent: %v, want a Referenced refusal naming %s", r, child)
	}
	if r := inplace.CheckReferences(parent, 17598); r != nil {
		t.Errorf("a change past the attached thread's cutoff: %v, want none", r)
	}
	if refs := inplace.References(child); len(refs) != 0 {
		t.Errorf("References(attached thread) = %+v, want none", refs)
	}
}
