package home_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// TestDeleteAndRestoreProjection: the projection repair removes exactly
// the thread's rows of Codex's four tables, and restoring puts back the
// same rows, value for value, over whatever Codex built since.
func TestDeleteAndRestoreProjection(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex")
	if err := homegen.Build(dir, homegen.Base); err != nil {
		t.Fatal(err)
	}
	h := home.New(dir)
	before, err := h.ProjectionOf(homegen.Thread)
	if err != nil || before == nil || before.Items != 4 || before.Turns != 2 || before.Cursor.Offset != 40673 || before.Cursor.Ordinal != 24 {
		t.Fatalf("projection of the base home: %+v, %v", before, err)
	}
	saved, err := h.DeleteProjection(homegen.Thread)
	if err != nil || saved == nil {
		t.Fatalf("delete: %v", err)
	}
	if p, err := h.ProjectionOf(homegen.Thread); err != nil || p != nil {
		t.Fatalf("after delete: %+v, %v", p, err)
	}
	var tables []string
	for _, st := range saved.Tables {
		tables = append(tables, st.Name)
	}
	if d := cmp.Diff([]string{"thread_items", "thread_turns", "thread_history_projection_state"}, tables); d != "" {
		t.Errorf("saved tables (-want +got):\n%s", d)
	}
	if again, err := h.DeleteProjection(homegen.Thread); err != nil || again != nil {
		t.Fatalf("second delete: %+v, %v (want nothing to delete)", again, err)
	}
	// Codex projects again from the file meanwhile (here: one stray row).
	if err := homegen.Exec(h.HistoryDB(), `INSERT INTO thread_history_projection_state VALUES ('`+homegen.Thread+`', 99, 3)`); err != nil {
		t.Fatal(err)
	}
	if err := h.RestoreProjection(saved); err != nil {
		t.Fatal(err)
	}
	after, err := h.ProjectionOf(homegen.Thread)
	if err != nil || after == nil || *after != *before {
		t.Fatalf("restored %+v, want %+v (%v)", after, before, err)
	}
	resaved, err := h.DeleteProjection(homegen.Thread)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(saved, resaved); d != "" {
		t.Errorf("restored rows differ from the saved ones (-saved +restored):\n%s", d)
	}
}

// TestRestoreRefusesForeignTables: a saved projection read back from an
// undo record cannot name a table other than Codex's projection tables.
func TestRestoreRefusesForeignTables(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex")
	if err := homegen.Build(dir, homegen.Base); err != nil {
		t.Fatal(err)
	}
	h := home.New(dir)
	bad := &home.SavedProjection{DB: "thread_history_1.sqlite", ThreadID: homegen.Thread,
		Tables: []home.SavedTable{{Name: "sqlite_master", Columns: []string{"name"}, Rows: [][]home.Value{{}}}}}
	if err := h.RestoreProjection(bad); err == nil {
		t.Fatal("restored rows into sqlite_master")
	}
	if p, _ := h.ProjectionOf(homegen.Thread); p == nil || p.Items != 4 {
		t.Fatalf("a refused restore changed the projection: %+v", p)
	}
}

// TestRestoreRefusesOtherThreadsRows: saved rows can only be the thread's
// own.
func TestRestoreRefusesOtherThreadsRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex")
	if err := homegen.Build(dir, homegen.Base); err != nil {
		t.Fatal(err)
	}
	h := home.New(dir)
	saved, err := h.DeleteProjection(homegen.Thread)
	if err != nil {
		t.Fatal(err)
	}
	other := "ffffffff-0000-7000-8000-000000000001"
	for _, st := range saved.Tables {
		for i, c := range st.Columns {
			if c == "thread_id" {
				st.Rows[0][i] = home.Value{Text: &other}
			}
		}
	}
	if err := h.RestoreProjection(saved); err == nil {
		t.Fatal("restored another thread's rows")
	}
}
