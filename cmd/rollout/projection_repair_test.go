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

// codexHomeWithTear lays out the home Codex 0.171.0 made, its rollout
// ending in a torn line (something for repair to fix).
func codexHomeWithTear(t *testing.T) (root, path string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "codex")
	if err := homegen.Build(root, homegen.Base); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(root, filepath.FromSlash(homegen.Rollout))
	appendTo(t, path, []byte(`{"timestamp":"2026-12-01T20:31:00.000Z","ordinal":24,"type":"event_msg","payl`))
	return root, path
}

// codexHomeWithBadLine lays out the home Codex 0.171.0 made and puts a
// torn record on line 14, before the projection's cursor: repair moves it
// to the quarantine, so every byte after it moves.
func codexHomeWithBadLine(t *testing.T) (root, path string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "codex")
	if err := homegen.Build(root, homegen.Base); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(root, filepath.FromSlash(homegen.Rollout))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines = append(lines[:13], append([]string{`{"timestamp":"2026-12-01T20:30:53.100Z","ordinal":13,"type":"event_msg","payload":{"type":"tok` + "\n"}, lines[13:]...)...)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, path
}

// TestRepairDeletesStaleProjection: a repair that changes bytes before the
// projection's cursor says so in its plan, deletes the thread's projection
// when it writes (the home then has no projection finding), and undo puts
// the same rows back.
func TestRepairDeletesStaleProjection(t *testing.T) {
	root, path := codexHomeWithBadLine(t)
	h := home.New(root)
	before, err := h.ProjectionOf(homegen.Thread)
	if err != nil || before == nil {
		t.Fatalf("projection: %+v %v", before, err)
	}
	code, out, e := runRollout("repair", path)
	if code != exitOK || !strings.Contains(out, "--write deletes the projection in one transaction") || !strings.Contains(out, "(4 items, 2 turns) was made from the file up to byte 40673") {
		t.Fatalf("dry run: exit %d, no projection note:\n%s%s", code, out, e)
	}
	if p, _ := h.ProjectionOf(homegen.Thread); p == nil || *p != *before {
		t.Fatal("the dry run changed the projection")
	}
	code, out, e = runRollout("repair", "--write", path)
	if code != exitOK || !strings.Contains(out, "deleted Codex's projection of thread "+homegen.Thread) {
		t.Fatalf("write: exit %d\n%s%s", code, out, e)
	}
	if p, err := h.ProjectionOf(homegen.Thread); err != nil || p != nil {
		t.Fatalf("after --write the projection is %+v (%v), want none", p, err)
	}
	rep, err := home.Check(h, home.CheckOptions{})
	if err != nil || len(rep.Observations) != 0 {
		t.Fatalf("home after the repair: %+v %v", rep, err)
	}
	code, out, e = runRollout("repair", "--undo", path)
	if code != exitOK || !strings.Contains(out, "put back Codex's projection") {
		t.Fatalf("undo: exit %d\n%s%s", code, out, e)
	}
	after, err := h.ProjectionOf(homegen.Thread)
	if err != nil || after == nil || *after != *before {
		t.Fatalf("after undo %+v, want %+v (%v)", after, before, err)
	}
	if _, err := os.Stat(filepath.Join(root, "rollout-artifacts")); !os.IsNotExist(err) {
		t.Errorf("undo left artifacts behind: %v", err)
	}
}

// TestRepairKeepsProjectionBehindChanges: a repair whose changes lie at or
// after the cursor (a torn line appended after it) leaves the projection
// alone, and its plan neither mentions deleting it nor sends the user to
// remove it by hand (that advice is for a copy outside any home).
func TestRepairKeepsProjectionBehindChanges(t *testing.T) {
	root, path := codexHomeWithTear(t)
	h := home.New(root)
	before, _ := h.ProjectionOf(homegen.Thread)
	code, out, e := runRollout("repair", "--write", path)
	if code != exitOK || strings.Contains(out, "deletes the projection") || strings.Contains(out, "deleted Codex's projection") || strings.Contains(out, "remove the thread's projection") {
		t.Fatalf("exit %d\n%s%s", code, out, e)
	}
	if d := cmp.Diff(before, mustProjection(t, h, homegen.Thread)); d != "" {
		t.Errorf("the projection changed (-before +after):\n%s", d)
	}
}

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
