package repair_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// An in-place repair that changes bytes before the projection's cursor
// refuses (HistoryUnreadable, exit 4) when the history database cannot be
// read, in each way issue 36 found, and leaves the file as it was; an
// absent database lets it go ahead.
func TestRepairRefusesUnreadableHistory(t *testing.T) {
	for _, s := range homegen.Spoilages {
		t.Run(s.String(), func(t *testing.T) {
			root, path := codexHomeWithBadLine(t)
			before, _ := os.ReadFile(path)
			filetest.SpoilHistory(t, root, s)
			o, out, err := repairWrite(repair.Options{Path: path, Write: true})
			if r := refusalOf(o, err); r == nil || r.Kind != inplace.HistoryUnreadable {
				t.Fatalf("repair --write: %v, refusal %+v, want HistoryUnreadable\n%s", err, r, out)
			}
			if exitOf(o) != 4 {
				t.Errorf("exit %d, want 4", exitOf(o))
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("a refused repair changed the file")
			}
		})
	}
	t.Run("absent", func(t *testing.T) {
		root, path := codexHomeWithBadLine(t)
		for _, side := range []string{"", "-wal", "-shm"} {
			os.Remove(filepath.Join(root, "thread_history_1.sqlite"+side))
		}
		o, out, err := repairWrite(repair.Options{Path: path, Write: true})
		if err != nil || exitOf(o) != 0 || o.Refusal != nil {
			t.Fatalf("repair --write without a history database: %v, exit %d\n%s", err, exitOf(o), out)
		}
	})
}

// repair --undo refuses the same way before it puts the backup back.
func TestRepairUndoRefusesUnreadableHistory(t *testing.T) {
	for _, s := range homegen.Spoilages {
		t.Run(s.String(), func(t *testing.T) {
			root, path := codexHomeWithBadLine(t)
			if o, out, err := repairWrite(repair.Options{Path: path, Write: true}); err != nil || exitOf(o) != 0 {
				t.Fatalf("write: %v, exit %d\n%s", err, exitOf(o), out)
			}
			written, _ := os.ReadFile(path)
			filetest.SpoilHistory(t, root, s)
			_, err := repair.Undo(path, repair.UndoOptions{})
			var r *inplace.Refusal
			if !errors.As(err, &r) || r.Kind != inplace.HistoryUnreadable {
				t.Fatalf("undo: %v, want a HistoryUnreadable refusal", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(written) {
				t.Error("a refused undo changed the file")
			}
		})
	}
}
