package repair_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

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
	o, out, err := repairWrite(repair.Options{Path: path})
	if err != nil || exitOf(o) != 0 || !strings.Contains(out, "--write deletes the projection in one transaction") || !strings.Contains(out, "(4 items, 2 turns) was made from the file up to byte 40673") {
		t.Fatalf("dry run: %v, exit %d, no projection note:\n%s", err, exitOf(o), out)
	}
	if p, _ := h.ProjectionOf(homegen.Thread); p == nil || *p != *before {
		t.Fatal("the dry run changed the projection")
	}
	o, out, err = repairWrite(repair.Options{Path: path, Write: true})
	if err != nil || exitOf(o) != 0 || !strings.Contains(out, "deleted Codex's projection of thread "+homegen.Thread) {
		t.Fatalf("write: %v, exit %d\n%s", err, exitOf(o), out)
	}
	if p, err := h.ProjectionOf(homegen.Thread); err != nil || p != nil {
		t.Fatalf("after the write the projection is %+v (%v), want none", p, err)
	}
	rep, err := home.Check(h, home.CheckOptions{})
	if err != nil || len(rep.Observations) != 0 {
		t.Fatalf("home after the repair: %+v %v", rep, err)
	}
	// The command says "put back Codex's projection" when Projection is set.
	if u, err := repair.Undo(path, repair.UndoOptions{}); err != nil || u.Late != nil || !u.Projection {
		t.Fatalf("undo: %+v %v", u, err)
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
	root, path := filetest.CodexHomeWithTear(t)
	h := home.New(root)
	before, _ := h.ProjectionOf(homegen.Thread)
	o, out, err := repairWrite(repair.Options{Path: path, Write: true})
	if err != nil || exitOf(o) != 0 || strings.Contains(out, "deletes the projection") || strings.Contains(out, "deleted Codex's projection") || strings.Contains(out, "remove the thread's projection") {
		t.Fatalf("%v, exit %d\n%s", err, exitOf(o), out)
	}
	after, err := h.ProjectionOf(homegen.Thread)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the projection changed (-before +after):\n%s", d)
	}
}
