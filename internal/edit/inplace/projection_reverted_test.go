package inplace_test

import (
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// In the home Codex 0.171.0 made with thread/revert each file has its own
// projection, under its rollout id: a change to the current file makes
// that one stale, not the original file's (under the thread id).
func TestStaleProjectionOfRevertedThread(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex-home")
	if err := homegen.Build(dir, homegen.Reverted); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file, key string
		cursor    int64
	}{
		{homegen.RevertedCurrent, homegen.RevertedRollout, 7451},
		{homegen.RevertedOriginal, homegen.RevertedThread, 27579},
	} {
		pp, r := inplace.StaleProjection(filepath.Join(dir, tt.file), 0)
		if r != nil || pp == nil || pp.ThreadID != tt.key || pp.Cursor != tt.cursor {
			t.Errorf("%s: StaleProjection = %+v %v, want key %s cursor %d", tt.file, pp, r, tt.key, tt.cursor)
		}
	}
}
