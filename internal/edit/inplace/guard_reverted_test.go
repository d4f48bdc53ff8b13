package inplace_test

import (
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// In the home Codex 0.171.0 made with thread/revert, the current file
// continues the original through its history_base. Both files carry the
// thread's id in session_meta; the current one is known by the rollout
// id of its name, so its history_base naming the original is a
// reference, not the file naming itself.
func TestRevertedOriginalIsReferenced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex-home")
	if err := homegen.Build(dir, homegen.Reverted); err != nil {
		t.Fatal(err)
	}
	original, current := filepath.Join(dir, homegen.RevertedOriginal), filepath.Join(dir, homegen.RevertedCurrent)
	refs := inplace.References(original)
	if len(refs) != 1 || refs[0].Path != current || refs[0].RolloutID != homegen.RevertedRollout {
		t.Fatalf("References(original) = %+v, want the current file (rollout %s)", refs, homegen.RevertedRollout)
	}
	if refs := inplace.References(current); len(refs) != 0 {
		t.Errorf("References(current) = %+v, want none", refs)
	}
}
