package sweep_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/edit/sweep"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// strayHome is a Codex home whose rollout has a backup beside it, where an
// older rollout left it: a stray.
func strayHome(t *testing.T) (path string, found []artifacts.Found) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sessions", "2026", "03", "10")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl")
	os.WriteFile(path, []byte(filetest.EscapeRollout), 0o644)
	os.WriteFile(path+artifacts.BackupSuffix, []byte("the backup\n"), 0o644)
	found, err := artifacts.OfFile(path)
	if err != nil || len(found) != 1 || !found[0].Stray {
		t.Fatalf("found %+v (%v), want the stray backup", found, err)
	}
	return path, found
}

// TestMoveMovesStrays: a stray goes to its place in the store, never
// copied: it is in one place or the other.
func TestMoveMovesStrays(t *testing.T) {
	path, found := strayHome(t)
	res := sweep.Move(found, false)
	if res.Done != 1 || len(res.Errors) != 0 {
		t.Fatalf("Move: %+v", res)
	}
	dst, _ := found[0].Destination()
	if string(filetest.Read(t, dst)) != "the backup\n" || !outfile.Absent(path+artifacts.BackupSuffix) {
		t.Errorf("the backup is not only in the store (%s)", dst)
	}
}

// TestMoveSkipsBusyRollouts: a rollout whose lock a repair or reclaim holds
// keeps its artifacts; the refusal is returned, nothing is done.
func TestMoveSkipsBusyRollouts(t *testing.T) {
	path, found := strayHome(t)
	g, err := inplace.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	res := sweep.Move(found, true)
	var r *inplace.Refusal
	if res.Done != 0 || len(res.Errors) != 1 || !errors.As(res.Errors[0], &r) || r.Kind != inplace.Busy {
		t.Fatalf("Move of a busy rollout: %+v", res)
	}
	if string(filetest.Read(t, path+artifacts.BackupSuffix)) != "the backup\n" {
		t.Error("the artifact of a busy rollout was touched")
	}
}

// TestMoveRefusesStoreOthersMayWrite: a stray is not moved into a store
// another user may write (there it could be deleted or replaced before an
// undo reads it): the error names the directory; the stray stays.
func TestMoveRefusesStoreOthersMayWrite(t *testing.T) {
	path, found := strayHome(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path)))))
	store := filepath.Join(home, artifacts.StoreDir)
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(store, 0o777)
	res := sweep.Move(found, false)
	var oe *artifacts.OwnerError
	if res.Done != 0 || len(res.Errors) != 1 || !errors.As(res.Errors[0], &oe) || oe.Dir != store {
		t.Fatalf("Move into a store others may write: %+v", res)
	}
	if outfile.Absent(path + artifacts.BackupSuffix) {
		t.Error("the stray was moved")
	}
}
