package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
	"github.com/rollout-dev/rollout/rollout"
)

// The repair's side of the projection (its plan's note, the deletion, the
// undo that puts the rows back) is tested beside repair, in
// internal/edit/repair/projection_test.go.

func mustProjection(t *testing.T, h *home.Home, thread string) *home.ProjectionInfo {
	t.Helper()
	p, err := h.ProjectionOf(thread)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReclaimDeletesStaleProjection: reclaim --write whose cuts lie before
// the projection's cursor deletes the thread's projection (the plan says
// so first), and reclaim --undo puts the same rows back.
func TestReclaimDeletesStaleProjection(t *testing.T) {
	root, path, thread := bloatHomeWithProjection(t)
	h := home.New(root)
	before := mustProjection(t, h, thread)
	code, out, e := runRollout("reclaim", "--policy", "superseded-checkpoints", path)
	if code != exitOK || !strings.Contains(out, "--write deletes the projection") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, e)
	}
	code, out, e = runRollout("reclaim", "--policy", "superseded-checkpoints", "--write", path)
	if code != exitOK || !strings.Contains(out, "deleted Codex's projection of thread "+thread) {
		t.Fatalf("write: exit %d\n%s%s", code, out, e)
	}
	if p := mustProjection(t, h, thread); p != nil {
		t.Fatalf("after --write: %+v", p)
	}
	code, out, e = runRollout("reclaim", "--undo", path)
	if code != exitOK || !strings.Contains(out, "put back Codex's projection") {
		t.Fatalf("undo: exit %d\n%s%s", code, out, e)
	}
	if d := cmp.Diff(before, mustProjection(t, h, thread)); d != "" {
		t.Errorf("after undo (-before +after):\n%s", d)
	}
}

// bloatHomeWithProjection is bloatHome with a projection of its thread
// over the whole file, as Codex keeps it, in the schema of the history
// database Codex 0.171.0 made.
func bloatHomeWithProjection(t *testing.T) (root, path, thread string) {
	t.Helper()
	root, path = bloatHome(t)
	thread = rolloutThread(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	dump, err := os.ReadFile(filepath.Join(homegen.Dir(), "base", homegen.Base, "thread_history_1.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(root, "thread_history_1.sqlite")
	if err := homegen.Exec(db, string(dump)); err != nil {
		t.Fatal(err)
	}
	if err := homegen.Exec(db, fmt.Sprintf(`INSERT INTO thread_history_projection_state VALUES ('%s', %d, 40);
		INSERT INTO thread_items (thread_id, turn_id, item_id, rollout_ordinal, created_at_ms, item_json, item_type) VALUES ('%s', 't1', 'i1', 3, 0, '{}', 'userMessage')`, thread, fi.Size(), thread)); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "thread-writer-locks"), 0o755)
	if p := mustProjection(t, home.New(root), thread); p == nil || p.Items != 1 {
		t.Fatalf("setup: %+v", p)
	}
	return root, path, thread
}

// TestReclaimUndoRestartRestoresProjection: a reclaim --undo killed after
// its rename, before it put the projection rows back, puts them back when
// it is run again.
func TestReclaimUndoRestartRestoresProjection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	root, path, thread := bloatHomeWithProjection(t)
	h := home.New(root)
	before := mustProjection(t, h, thread)
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if code, o, e := runRollout("reclaim", "--policy", "superseded-checkpoints", "--write", path); code != exitOK || !strings.Contains(o, "deleted Codex's projection") {
		t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
	}
	paused := killAtStage(t, "replaced", "reclaim", "--undo", path)
	if !paused {
		t.Fatal("the undo never reached the stage after its rename")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, original) {
		t.Fatal("killed after its rename, the undo had not put the original back")
	}
	if p := mustProjection(t, h, thread); p != nil {
		t.Fatalf("killed before it, the undo had put the projection back: %+v", p)
	}
	code, out, e := runRollout("reclaim", "--undo", path)
	if code != exitOK || !strings.Contains(out, "put back Codex's projection") {
		t.Fatalf("undo again: exit %d\n%s%s", code, out, e)
	}
	if d := cmp.Diff(before, mustProjection(t, h, thread)); d != "" {
		t.Errorf("after the undo was run again (-before +after):\n%s", d)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, original) {
		t.Error("the undo run again changed the original")
	}
	if _, err := os.Stat(filepath.Join(root, "rollout-artifacts")); !os.IsNotExist(err) {
		t.Errorf("the undo left artifacts behind: %v", err)
	}
}

func rolloutThread(t *testing.T, path string) string {
	t.Helper()
	id := rollout.MetaThreadID(path)
	if id == "" {
		t.Fatalf("%s has no thread id", path)
	}
	return id
}
