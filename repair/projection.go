package repair

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rollout-dev/rollout/home"
	"github.com/rollout-dev/rollout/internal/outfile"
	"github.com/rollout-dev/rollout/rollout"
)

// ProjectionPlan is what an in-place repair does to Codex's history
// projection of the thread (thread_history_N.sqlite): when it changes a
// byte before the projection's cursor, the rows no longer describe the
// file, and --write deletes them in one transaction before it puts the
// result in place, as Codex does before it rewrites a rollout itself
// (thread_history::delete_thread in migrate_one_rollout): Codex projects
// the thread again from the file the next time it reads it (measured with
// 0.171.0: it resumes, appends to the same file, and its new cursor is the
// file's end). The rows go to FILE.repair-undo.projection.json, and
// repair --undo puts them back.
type ProjectionPlan struct {
	DB       string // the history database
	ThreadID string
	Cursor   int64 // the cursor's byte offset
	Items    int   // thread_items rows
	Turns    int   // thread_turns rows
	From     int64 // the first byte the repair changes
	Deleted  bool  // --write deleted the rows (saved for --undo)
}

// planProjection finds the projection a rewrite in place invalidates.
func (t *Txn) planProjection() {
	if t.opts.Output != "" || t.NothingToFix() {
		return
	}
	h, ok := home.Of(t.Path)
	if !ok {
		return
	}
	thread := threadOf(t.Path)
	if thread == "" {
		return
	}
	info, err := h.ProjectionOf(thread)
	if err != nil || info == nil || info.Cursor.Pending {
		return
	}
	from, ok := t.firstChange()
	if !ok || from >= info.Cursor.Offset {
		return // the bytes the projection read stay as they are
	}
	t.Projection = &ProjectionPlan{DB: info.DB, ThreadID: thread, Cursor: info.Cursor.Offset,
		Items: info.Items, Turns: info.Turns, From: from}
}

// firstChange is the offset of the first input byte the rewrite changes.
func (t *Txn) firstChange() (int64, bool) {
	first, ok := int64(0), false
	note := func(off int64) {
		if !ok || off < first {
			first, ok = off, true
		}
	}
	for _, c := range t.Changes {
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
	h, ok := home.Of(t.Path)
	if !ok {
		return nil
	}
	saved, err := h.DeleteProjection(t.Projection.ThreadID)
	if err != nil {
		return fmt.Errorf("%w: deleting Codex's projection of thread %s: %v", errWriteFailed, t.Projection.ThreadID, err)
	}
	t.savedProjection = saved
	t.Projection.Deleted = saved != nil
	return nil
}

// restoreProjection puts the deleted rows back after a refused replace.
func (t *Txn) restoreProjection() {
	if t.savedProjection == nil {
		return
	}
	if h, ok := home.Of(t.Path); ok && h.RestoreProjection(t.savedProjection) == nil {
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
	b, err := json.Marshal(t.savedProjection)
	if err != nil {
		return nil, err
	}
	path := t.place.UndoProjection()
	if err := outfile.Write(path, outfile.Options{Perm: 0o600, RegularOnly: true}, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return &undoProjection{Name: filepath.Base(path), DB: t.savedProjection.DB, ThreadID: t.savedProjection.ThreadID,
		Rows: fileSum{Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}}, nil
}

// maxProjectionRows bounds the rows file undo reads back.
const maxProjectionRows = 1 << 30

// restoreUndoProjection puts back the rows an undo record names, after the
// file was restored. The name is only checked: the file read is FILE's
// own (derived from FILE), and its size and SHA-256 must be the record's.
func restoreUndoProjection(path string, rp placeLike, p *undoProjection, thread string) error {
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
	f, err := outfile.OpenExisting(name)
	if err != nil {
		return err
	}
	if f == nil {
		return nil // already restored and removed by an undo that stopped after it
	}
	b, err := io.ReadAll(io.LimitReader(f, maxProjectionRows))
	f.Close()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != p.Rows.Size || hex.EncodeToString(sum[:]) != p.Rows.SHA256 {
		return fmt.Errorf("%s is not the file the repair wrote: refusing it", name)
	}
	var saved home.SavedProjection
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&saved); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if saved.ThreadID != p.ThreadID || saved.DB != p.DB {
		return fmt.Errorf("%s does not hold the rows the undo record names: refusing it", name)
	}
	h, ok := home.Of(path)
	if !ok {
		return fmt.Errorf("%s is no longer in a Codex home: its projection rows cannot be restored", path)
	}
	if err := h.RestoreProjection(&saved); err != nil {
		return err
	}
	return os.Remove(name)
}

// placeLike is the part of artifacts.Place the projection undo names.
type placeLike interface{ UndoProjection() string }

var _ = rollout.MetaThreadID
