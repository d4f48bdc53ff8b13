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

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
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

// StaleProjection is the projection of the rollout's thread that a change
// of its bytes from byte from on invalidates: nil when the rollout is not
// in a Codex home, the thread has no projection, or the projection's
// cursor is at or before from (the bytes it read stay as they are).
func StaleProjection(path string, from int64) *ProjectionPlan {
	h, ok := home.Of(path)
	if !ok {
		return nil
	}
	thread := threadOf(path)
	if thread == "" {
		return nil
	}
	info, err := h.ProjectionOf(thread)
	if err != nil || info == nil || info.Cursor.Pending || from >= info.Cursor.Offset {
		return nil
	}
	return &ProjectionPlan{DB: info.DB, ThreadID: thread, Cursor: info.Cursor.Offset,
		Items: info.Items, Turns: info.Turns, From: from}
}

// Delete deletes the projection in one transaction and returns its rows.
func (pp *ProjectionPlan) Delete(path string) (*home.SavedProjection, error) {
	h, ok := home.Of(path)
	if !ok {
		return nil, nil
	}
	saved, err := h.DeleteProjection(pp.ThreadID)
	if err != nil {
		return nil, fmt.Errorf("%w: deleting Codex's projection of thread %s: %v", errWriteFailed, pp.ThreadID, err)
	}
	pp.Deleted = saved != nil
	return saved, nil
}

// RestoreProjection puts deleted rows back into the home of path.
func RestoreProjection(path string, saved *home.SavedProjection) error {
	if saved == nil {
		return nil
	}
	h, ok := home.Of(path)
	if !ok {
		return fmt.Errorf("%s is no longer in a Codex home: its projection rows cannot be restored", path)
	}
	return h.RestoreProjection(saved)
}

// WriteProjectionRows writes deleted rows to name (private to the owner),
// returning their size and SHA-256.
func WriteProjectionRows(name string, saved *home.SavedProjection) (int64, string, error) {
	b, err := json.Marshal(saved)
	if err != nil {
		return 0, "", err
	}
	if err := outfile.Write(name, outfile.Options{Perm: 0o600, RegularOnly: true}, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return 0, "", err
	}
	sum := sha256.Sum256(b)
	return int64(len(b)), hex.EncodeToString(sum[:]), nil
}

// ReadProjectionRows reads rows WriteProjectionRows wrote (nil: no such
// file); with want set, only when they have that size and SHA-256.
func ReadProjectionRows(name string, want *fileSum) (*home.SavedProjection, error) {
	f, err := outfile.OpenExisting(name)
	if err != nil || f == nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxProjectionRows))
	f.Close()
	if err != nil {
		return nil, err
	}
	if want != nil {
		sum := sha256.Sum256(b)
		if int64(len(b)) != want.Size || hex.EncodeToString(sum[:]) != want.SHA256 {
			return nil, fmt.Errorf("%s is not the file the repair wrote: refusing it", name)
		}
	}
	var saved home.SavedProjection
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&saved); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return &saved, nil
}

// planProjection finds the projection a rewrite in place invalidates.
func (t *Txn) planProjection() {
	if t.opts.Output != "" || t.NothingToFix() {
		return
	}
	_, t.InHome = home.Of(t.Path)
	if from, ok := t.firstChange(); ok {
		t.Projection = StaleProjection(t.Path, from)
		if t.Refusal == nil {
			// Said before anything is written, and by a dry run too.
			t.Refusal = CheckReferences(t.Path, from)
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
	if RestoreProjection(t.Path, t.savedProjection) == nil {
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
	size, sum, err := WriteProjectionRows(path, t.savedProjection)
	if err != nil {
		return nil, err
	}
	return &undoProjection{Name: filepath.Base(path), DB: t.savedProjection.DB, ThreadID: t.savedProjection.ThreadID,
		Rows: fileSum{Size: size, SHA256: sum}}, nil
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
	saved, err := ReadProjectionRows(name, &p.Rows)
	if err != nil {
		return err
	}
	if saved == nil {
		return nil // already restored and removed by an undo that stopped after it
	}
	if saved.ThreadID != p.ThreadID || saved.DB != p.DB {
		return fmt.Errorf("%s does not hold the rows the undo record names: refusing it", name)
	}
	if err := RestoreProjection(path, saved); err != nil {
		return err
	}
	return os.Remove(name)
}

// placeLike is the part of artifacts.Place the projection undo names.
type placeLike interface{ UndoProjection() string }
