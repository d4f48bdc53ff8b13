package inplace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

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
//
// A history database that exists and cannot be read (Codex holds it in
// exclusive locking mode or mid-commit, it is damaged, a FIFO, or of a
// schema this version does not know) is a *Refusal of kind
// HistoryUnreadable: the write would otherwise leave a cursor Codex trusts
// pointing into bytes that moved (it then files its next turn at the
// wrong ordinal). Only an absent database means no projection.
func StaleProjection(path string, from int64) (*ProjectionPlan, *Refusal) {
	h, ok := home.Of(path)
	if !ok {
		return nil, nil
	}
	thread := threadOf(path)
	if thread == "" {
		return nil, nil
	}
	key := home.ProjectionKey(path, thread) // a reverted thread's file has its own
	info, err := h.ProjectionOf(key)
	if err != nil {
		return nil, &Refusal{Kind: HistoryUnreadable, Path: path,
			Err: fmt.Errorf("the history database holding Codex's projection of thread %s cannot be read, so it is unknown whether changing %s leaves the projection stale: %w", key, path, err)}
	}
	if info == nil || info.Cursor.Pending || from >= info.Cursor.Offset {
		return nil, nil
	}
	return &ProjectionPlan{DB: info.DB, ThreadID: key, Cursor: info.Cursor.Offset,
		Items: info.Items, Turns: info.Turns, From: from}, nil
}

// Delete deletes the projection in one transaction and returns its rows.
func (pp *ProjectionPlan) Delete(path string) (*home.SavedProjection, error) {
	h, ok := home.Of(path)
	if !ok {
		return nil, nil
	}
	saved, err := h.DeleteProjection(pp.ThreadID)
	if err != nil {
		return nil, fmt.Errorf("%w: deleting Codex's projection of thread %s: %w", ErrWriteFailed, pp.ThreadID, err)
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
	return writeProjectionRows(saved, func(write func(io.Writer) error) error {
		return outfile.Write(name, outfile.Options{Perm: 0o600, RegularOnly: true}, write)
	})
}

// WriteProjectionRowsIn is WriteProjectionRows for the entry name of dir,
// a store directory held open.
func WriteProjectionRowsIn(dir *outfile.Dir, name string, saved *home.SavedProjection) (int64, string, error) {
	return writeProjectionRows(saved, func(write func(io.Writer) error) error {
		return outfile.WriteIn(dir, name, outfile.Options{Perm: 0o600}, write)
	})
}

func writeProjectionRows(saved *home.SavedProjection, put func(func(io.Writer) error) error) (int64, string, error) {
	b, err := json.Marshal(saved)
	if err != nil {
		return 0, "", err
	}
	if err := put(func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return 0, "", err
	}
	sum := sha256.Sum256(b)
	return int64(len(b)), hex.EncodeToString(sum[:]), nil
}

// FileSum is a file's size and SHA-256.
type FileSum struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ReadProjectionRows reads rows WriteProjectionRows wrote (nil: no such
// file); with want set, only when they have that size and SHA-256.
func ReadProjectionRows(name string, want *FileSum) (*home.SavedProjection, error) {
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

// maxProjectionRows bounds the rows file undo reads back.
const maxProjectionRows = 1 << 30
