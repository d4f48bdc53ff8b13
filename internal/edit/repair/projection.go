package repair

import (
	"fmt"
	"path/filepath"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
)

// The repair's side of Codex's history projection: which rows a rewrite
// in place invalidates (inplace.StaleProjection), their deletion right
// before the rename, and their record for --undo.

// planProjection finds the projection a rewrite in place invalidates.
func (t *Txn) planProjection() {
	if t.opts.Output != "" || t.NothingToFix() {
		return
	}
	_, t.InHome = home.Of(t.Path)
	if from, ok := t.firstChange(); ok {
		var unreadable *inplace.Refusal
		t.Projection, unreadable = inplace.StaleProjection(t.Path, from)
		// Said before anything is written, and by a dry run too.
		if t.Refusal == nil {
			t.Refusal = inplace.CheckReferences(t.Path, from)
		}
		if t.Refusal == nil {
			t.Refusal = unreadable
		}
	}
}

// firstChange is the offset of the first input byte the rewrite changes.
func (t *Txn) firstChange() (int64, bool) {
	first, ok := int64(0), false
	note := func(off int64) {
		if !ok || off < first {
			first, ok = off, true
		}
	}
	for _, c := range t.Changes.All {
		note(c.Offset)
	}
	for _, q := range t.Quarantined {
		note(q.Offset)
	}
	if t.Salvage != nil {
		note(t.Salvage.Decoded)
	}
	return first, ok
}

// deleteProjection deletes the planned projection right before the
// result is put in place (Codex's order: the projection first, then the
// file).
func (t *Txn) deleteProjection() error {
	if t.Projection == nil || t.opts.Output != "" {
		return nil
	}
	saved, err := t.Projection.Delete(t.Path)
	t.savedProjection = saved
	return err
}

// restoreProjection puts the deleted rows back after a refused replace.
func (t *Txn) restoreProjection() {
	if t.savedProjection == nil {
		return
	}
	if inplace.RestoreProjection(t.Path, t.savedProjection) == nil {
		t.savedProjection, t.Projection.Deleted = nil, false
	}
}

// undoProjection is the undo record's member for the deleted rows: the
// file that holds them (beside the record) and its size and SHA-256.
type undoProjection struct {
	Name     string  `json:"name"`
	DB       string  `json:"db"`
	ThreadID string  `json:"thread_id"`
	Rows     fileSum `json:"rows"`
}

// saveProjection writes the deleted rows beside the undo record.
func (t *Txn) saveProjection() (*undoProjection, error) {
	if t.savedProjection == nil {
		return nil, nil
	}
	path := t.place.UndoProjection()
	size, sum, err := inplace.WriteProjectionRowsIn(t.store, filepath.Base(path), t.savedProjection)
	if err != nil {
		return nil, err
	}
	return &undoProjection{Name: filepath.Base(path), DB: t.savedProjection.DB, ThreadID: t.savedProjection.ThreadID,
		Rows: fileSum{Size: size, SHA256: sum}}, nil
}

// restoreUndoProjection puts back the rows an undo record names, after the
// file was restored. The name is only checked: the file read is FILE's
// own (derived from FILE), and its size and SHA-256 must be the record's.
func restoreUndoProjection(path string, rp placeLike, dir *outfile.Dir, p *undoProjection, thread string) error {
	if p == nil {
		return nil
	}
	name := rp.UndoProjection()
	if p.Name != filepath.Base(name) {
		return fmt.Errorf("the undo record names the projection rows %q, which are not %s's: refusing them", p.Name, path)
	}
	if thread != "" && p.ThreadID != thread {
		return fmt.Errorf("the projection rows are thread %s's, and %s is thread %s's: refusing them", p.ThreadID, path, thread)
	}
	saved, err := inplace.ReadProjectionRows(name, &inplace.FileSum{Size: p.Rows.Size, SHA256: p.Rows.SHA256})
	if err != nil {
		return err
	}
	if saved == nil {
		return nil // already restored and removed by an undo that stopped after it
	}
	if saved.ThreadID != p.ThreadID || saved.DB != p.DB {
		return fmt.Errorf("%s does not hold the rows the undo record names: refusing it", name)
	}
	if err := inplace.RestoreProjection(path, saved); err != nil {
		return err
	}
	return dir.Remove(filepath.Base(name))
}

// placeLike is the part of artifacts.Place the projection undo names.
type placeLike interface{ UndoProjection() string }
