package repair

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rollout-dev/rollout/internal/outfile"
)

// UndoSuffix names the record an in-place repair leaves next to the file
// (FILE.repair-undo.json): what it wrote and what it changed, so that
// Undo can check that the file is still the one repair wrote and restore
// the backup and the quarantine as they were.
const UndoSuffix = ".repair-undo.json"

// undoRecord is the content of FILE.repair-undo.json.
type undoRecord struct {
	Version int    `json:"version"`
	File    string `json:"file"`   // base names: the record moves with its directory
	Size    int64  `json:"size"`   // of the file repair wrote
	SHA256  string `json:"sha256"` // of the file repair wrote
	Backup  string `json:"backup"` // the original, kept by the repair
	// Quarantine is the quarantine file and what it held before the
	// repair appended to it (Existed false: it did not exist).
	Quarantine       string `json:"quarantine,omitempty"`
	QuarantineBefore *struct {
		Existed bool   `json:"existed"`
		Size    int64  `json:"size"`
		SHA256  string `json:"sha256"`
	} `json:"quarantine_before,omitempty"`
	QuarantineAfterSize int64 `json:"quarantine_after_size,omitempty"`
}

// recordUndo writes FILE.repair-undo.json after an in-place write with a
// backup. A failure to write it is a warning, not a failed repair.
func (t *Txn) recordUndo(qBefore *quarantineState) error {
	size, sum, err := fileHash(t.Path, -1)
	if err != nil {
		return err
	}
	rec := undoRecord{Version: 1, File: filepath.Base(t.Path), Size: size, SHA256: sum, Backup: filepath.Base(t.Backup)}
	if qBefore != nil {
		rec.Quarantine = filepath.Base(t.Quarantine)
		rec.QuarantineBefore = &struct {
			Existed bool   `json:"existed"`
			Size    int64  `json:"size"`
			SHA256  string `json:"sha256"`
		}{qBefore.existed, qBefore.size, qBefore.sha256}
		if fi, err := os.Stat(t.Quarantine); err == nil {
			rec.QuarantineAfterSize = fi.Size()
		}
	}
	return outfile.Write(t.Path+UndoSuffix, outfile.Options{Perm: 0o600}, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	})
}

// quarantineState is what a quarantine file held before a repair.
type quarantineState struct {
	existed bool
	size    int64
	sha256  string
}

func quarantineBefore(path string) (*quarantineState, error) {
	size, sum, err := fileHash(path, -1)
	if errors.Is(err, fs.ErrNotExist) {
		return &quarantineState{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &quarantineState{existed: true, size: size, sha256: sum}, nil
}

// fileHash is the size and SHA-256 of a file's first n bytes (n < 0: all).
func fileHash(path string, n int64) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	var r io.Reader = f
	if n >= 0 {
		r = io.LimitReader(f, n)
	}
	h := sha256.New()
	size, err := io.Copy(h, r)
	if err != nil {
		return 0, "", err
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

// UndoOutcome is what Undo restored.
type UndoOutcome struct {
	Path       string
	Backup     string // the file restored from
	Quarantine string // the quarantine restored ("" when the repair left it alone)
	Removed    int    // quarantine entries removed (lines)
	Deleted    bool   // the quarantine did not exist before: removed
}

// ErrNothingToUndo is a file with no undo record next to it.
var ErrNothingToUndo = errors.New("no repair to undo")

// Undo restores the file an in-place repair wrote from its backup, and the
// quarantine as it was before that repair, after checking that the file
// and the quarantine are still what the repair left (a *Refusal of kind
// Changed otherwise: nothing is touched). The record is then removed.
func Undo(path string) (*UndoOutcome, error) {
	recPath := path + UndoSuffix
	b, err := os.ReadFile(recPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s (only an in-place repair --write with a backup can be undone)", ErrNothingToUndo, path, filepath.Base(recPath))
	}
	if err != nil {
		return nil, err
	}
	var rec undoRecord
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&rec); err != nil || rec.Version != 1 || rec.Backup == "" {
		return nil, fmt.Errorf("%s: not an undo record this version reads", recPath)
	}
	dir := filepath.Dir(path)
	out := &UndoOutcome{Path: path, Backup: filepath.Join(dir, rec.Backup)}
	changed := func(format string, args ...any) error {
		return &Refusal{Kind: Changed, Path: path, Err: fmt.Errorf("%w: "+format, append([]any{errFileChanged}, args...)...)}
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, changed("%s is no longer the regular file repair wrote", path)
	}
	if size, sum, err := fileHash(path, -1); err != nil || size != rec.Size || sum != rec.SHA256 {
		return nil, changed("%s is not the file repair wrote (it changed since: %d bytes, was %d)", path, size, rec.Size)
	}
	if fi, err := os.Lstat(out.Backup); err != nil || !fi.Mode().IsRegular() {
		return nil, &Refusal{Kind: NotRollout, Path: path, Err: fmt.Errorf("the backup %s is missing", out.Backup)}
	}
	var qpath string
	var keep int64
	if q := rec.QuarantineBefore; q != nil && rec.Quarantine != "" {
		qpath = filepath.Join(dir, rec.Quarantine)
		size, _, err := fileHash(qpath, -1)
		if err != nil || size != rec.QuarantineAfterSize {
			return nil, changed("%s changed since the repair", qpath)
		}
		if q.Existed {
			if _, sum, err := fileHash(qpath, q.Size); err != nil || sum != q.SHA256 {
				return nil, changed("%s no longer starts with what it held before the repair", qpath)
			}
		}
		keep = q.Size
		out.Quarantine, out.Deleted = qpath, !q.Existed
		if n, err := countLines(qpath, keep); err == nil {
			out.Removed = n
		}
	}
	if qpath != "" {
		if out.Deleted {
			if err := os.Remove(qpath); err != nil {
				return nil, &Refusal{Kind: WriteFailed, Path: qpath, Err: err}
			}
		} else if err := truncateCopy(qpath, keep); err != nil {
			return nil, &Refusal{Kind: WriteFailed, Path: qpath, Err: err}
		}
	}
	if err := os.Rename(out.Backup, path); err != nil {
		return nil, &Refusal{Kind: WriteFailed, Path: path, Err: err}
	}
	os.Remove(recPath)
	if err := outfile.SyncDir(dir); err != nil {
		return out, fmt.Errorf("%s was restored, but syncing its directory failed: %w", path, err)
	}
	return out, nil
}

// countLines counts the lines of path after its first skip bytes.
func countLines(path string, skip int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(skip, io.SeekStart); err != nil {
		return 0, err
	}
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// truncateCopy replaces path, atomically, by its first n bytes (keeping
// its metadata).
func truncateCopy(path string, n int64) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	return outfile.Write(path, outfile.Options{CopyFrom: fi, CopyXattrsFrom: path}, func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(src, n))
		return err
	})
}
