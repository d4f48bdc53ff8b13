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

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/rollout"
)

// UndoSuffix names the record an in-place repair leaves in FILE's place
// (package artifacts): FILE.repair-undo.json.
const UndoSuffix = artifacts.UndoSuffix

// UndoVersion is the version of the undo record repair writes. Undo reads
// 1 (no original or thread: not restartable after its rename) and 2.
//
// To extend the record (say, rows of another store saved before the
// rewrite): add a member with omitempty; bump UndoVersion when an older
// rollout must refuse a record it cannot undo in full, and read the
// versions before it as they are.
//
// Version 3 adds the projection rows a repair deleted from Codex's history
// database (FILE.repair-undo.projection.json): an older rollout would
// restore the file without them.
const UndoVersion = 3

// undoFormat marks the file as ours.
const undoFormat = "rollout repair undo"

// undoRecord is the content of FILE.repair-undo.json. Names are base names
// and only checked: Undo derives every name it touches from FILE.
type undoRecord struct {
	Format   string `json:"format,omitempty"` // undoFormat (from version 2)
	Version  int    `json:"version"`
	File     string `json:"file"`                // FILE's base name
	ThreadID string `json:"thread_id,omitempty"` // session_meta's id ("": none read)
	// Written is FILE as the repair left it; Original what the backup
	// holds (FILE before the repair).
	Written  *fileSum `json:"written,omitempty"`
	Original *fileSum `json:"original,omitempty"`
	Backup   string   `json:"backup"` // FILE.bak or FILE.bak.N, beside the record

	// Quarantine is the quarantine (beside the record) and what it held
	// before the repair added to it (Before nil: it did not exist).
	Quarantine *undoQuarantine `json:"quarantine,omitempty"`
	// Projection names the rows of Codex's history projection the repair
	// deleted (version 3; nil: none).
	Projection *undoProjection `json:"projection,omitempty"`

	// Version 1 kept these at the top level.
	Size                int64  `json:"size,omitempty"`
	SHA256              string `json:"sha256,omitempty"`
	QuarantineBeforeV1  *v1Q   `json:"quarantine_before,omitempty"`
	QuarantineAfterSize int64  `json:"quarantine_after_size,omitempty"`
}

type undoQuarantine struct {
	Name      string   `json:"name"`
	Before    *fileSum `json:"before"`     // nil: the repair created it
	AfterSize int64    `json:"after_size"` // its size after the repair
}

type v1Q struct {
	Existed bool   `json:"existed"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
}

// UnmarshalJSON reads both versions into the version 2 members.
func (r *undoRecord) UnmarshalJSON(b []byte) error {
	type plain undoRecord
	var v struct {
		plain
		Q json.RawMessage `json:"quarantine"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = undoRecord(v.plain)
	if len(v.Q) == 0 || string(v.Q) == "null" {
		return nil
	}
	if v.Q[0] == '"' { // version 1: the name, and what it held apart
		var name string
		if err := json.Unmarshal(v.Q, &name); err != nil {
			return err
		}
		if q := r.QuarantineBeforeV1; q != nil {
			r.Quarantine = &undoQuarantine{Name: name, AfterSize: r.QuarantineAfterSize}
			if q.Existed {
				r.Quarantine.Before = &fileSum{Size: q.Size, SHA256: q.SHA256}
			}
		}
		return nil
	}
	r.Quarantine = &undoQuarantine{}
	return json.Unmarshal(v.Q, r.Quarantine)
}

// recordUndo writes FILE.repair-undo.json after an in-place write with a
// backup. A failure to write it is a warning, not a failed repair.
func (t *Txn) recordUndo(original fileSum, qBefore *quarantineState) error {
	size, sum, err := fileHash(t.Path, -1)
	if err != nil {
		return err
	}
	if t.Late != nil {
		// The bytes that arrived during the rename are in the backup too.
		if original.Size, original.SHA256, err = fileHashIn(t.store, base(t.Backup), -1); err != nil {
			return err
		}
	}
	rec := undoRecord{Format: undoFormat, Version: UndoVersion, File: filepath.Base(t.Path),
		Written: &fileSum{Size: size, SHA256: sum}, Original: &original, Backup: filepath.Base(t.Backup)}
	rec.ThreadID = rollout.MetaThreadID(t.Path)
	if rec.Projection, err = t.saveProjection(); err != nil {
		return fmt.Errorf("saving the projection rows: %w", err)
	}
	if qBefore != nil {
		rec.Quarantine = &undoQuarantine{Name: filepath.Base(t.Quarantine)}
		if qBefore.existed {
			rec.Quarantine.Before = &fileSum{Size: qBefore.size, SHA256: qBefore.sha256}
		}
		if f, err := t.store.OpenExisting(base(t.Quarantine)); err == nil && f != nil {
			if fi, err := f.Stat(); err == nil {
				rec.Quarantine.AfterSize = fi.Size()
			}
			f.Close()
		}
	}
	// The user's, like the backup (best effort).
	return outfile.WriteIn(t.store, base(t.place.UndoRecord()), outfile.Options{Perm: 0o600, Owner: t.src.fi}, func(w io.Writer) error {
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

func quarantineBefore(dir *outfile.Dir, name string) (*quarantineState, error) {
	size, sum, err := fileHashIn(dir, name, -1)
	if errors.Is(err, fs.ErrNotExist) {
		return &quarantineState{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &quarantineState{existed: true, size: size, sha256: sum}, nil
}

// restore puts the quarantine, the entry name of dir, back as it was (a
// repair refused after it was renamed into place).
func (q *quarantineState) restore(dir *outfile.Dir, name string) error {
	if !q.existed {
		return dir.Remove(name)
	}
	return truncateCopy(dir, name, q.size)
}

// fileHash is the size and SHA-256 of a file's first n bytes (n < 0: all).
// It does not follow a symlink and reads regular files only.
func fileHash(path string, n int64) (int64, string, error) {
	f, err := outfile.OpenExisting(path)
	return hashOpened(f, err, path, n)
}

// fileHashIn is fileHash for the entry name of dir.
func fileHashIn(dir *outfile.Dir, name string, n int64) (int64, string, error) {
	f, err := dir.OpenExisting(name)
	return hashOpened(f, err, dir.Join(name), n)
}

func hashOpened(f *os.File, err error, path string, n int64) (int64, string, error) {
	if err != nil {
		return 0, "", err
	}
	if f == nil {
		return 0, "", &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
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

func (s *fileSum) matches(path string) bool {
	size, sum, err := fileHash(path, -1)
	return s != nil && err == nil && size == s.Size && sum == s.SHA256
}

// matchesIn is matches for the entry name of dir.
func (s *fileSum) matchesIn(dir *outfile.Dir, name string) bool {
	size, sum, err := fileHashIn(dir, name, -1)
	return s != nil && err == nil && size == s.Size && sum == s.SHA256
}

// UndoOptions say how Undo replaces FILE.
type UndoOptions struct {
	// Force replaces FILE even while another process holds it open for
	// writing (what it writes next is lost).
	Force bool
	// Stage, when set (tests), is called at each step: "checked", "switch"
	// (right before the rename), "renamed", "quarantine".
	Stage func(string)
}

// UndoOutcome is what Undo restored.
type UndoOutcome struct {
	Path       string
	Backup     string        // the file restored from
	Quarantine string        // the quarantine restored ("" when the repair left it alone)
	Removed    int           // quarantine entries removed (lines)
	Deleted    bool          // the quarantine did not exist before: removed
	Resumed    bool          // an undo stopped after its rename was finished
	Late       *inplace.Late // bytes appended to FILE during the rename, kept
	// Projection: the rows of Codex's history projection the repair had
	// deleted were put back.
	Projection bool
}

// ErrNothingToUndo is a file with no undo record.
var ErrNothingToUndo = errors.New("no repair to undo")

// Undo restores the file an in-place repair wrote from its backup, and the
// quarantine as it was before that repair, after checking that the record
// belongs to FILE (its names are FILE's own artifacts, its thread, size and
// hash are FILE's) and that FILE and the quarantine are still what the
// repair left: a *inplace.Refusal otherwise (exit 4), and nothing is touched. The
// replace goes through the write guard (inplace.Guard.Replace). The record is then
// removed.
//
// Undo can be run again after it was stopped at any point: each step
// accepts the state before and after it.
func Undo(path string, opts UndoOptions) (*UndoOutcome, error) {
	u := &undo{path: path, opts: opts}
	var err error
	if u.place, err = artifacts.For(path); err != nil {
		return nil, &rollout.PathError{Path: path, Err: err}
	}
	if u.store, err = u.place.Open(false); err != nil {
		return nil, inplace.StoreRefusal(u.place.Dir, err)
	}
	defer func() {
		if u.rdir != u.store {
			u.rdir.Close()
		}
		u.store.Close()
	}()
	if u.rp, u.rdir, u.rec, err = findRecord(u.place, u.store); err != nil {
		return nil, err
	}
	if u.rec == nil {
		return nil, fmt.Errorf("%w: %s has no %s (only an in-place repair --write with a backup can be undone)", ErrNothingToUndo, path, filepath.Base(u.place.UndoRecord()))
	}
	if err := u.checkNames(); err != nil {
		return nil, err
	}
	g, err := inplace.Lock(path)
	if err != nil {
		return nil, err
	}
	defer g.Release()
	u.place.RemoveTemps() // a write or undo killed before its rename left them
	out, err := u.check()
	if err != nil {
		return nil, err
	}
	u.at("checked")
	if !out.Resumed {
		if out.Late, err = u.replace(g, out.Backup); err != nil {
			return nil, err
		}
		outfile.SyncDir(filepath.Dir(path))
	}
	u.at("renamed")
	return out, u.finish(out)
}

// undo is one run of Undo: FILE, its place and the record found.
type undo struct {
	path  string
	opts  UndoOptions
	place artifacts.Place // FILE's
	rp    artifacts.Place // where the record is
	// store: place.Dir held open (nil when it does not exist); rdir:
	// rp.Dir, where every step reads, renames and removes (relative to it).
	store, rdir *outfile.Dir
	rec         *undoRecord
	written     *fileSum // FILE as the repair left it
	q           *undoQuarantine
	qpath       string // the quarantine ("": the repair left it alone)
	// restored: the quarantine is already as it was before the repair.
	restored bool
}

func (u *undo) at(s string) {
	if u.opts.Stage != nil {
		u.opts.Stage(s)
	}
}

// refused is a refusal of kind Changed: nothing was touched.
func (u *undo) refused(format string, args ...any) error {
	return &inplace.Refusal{Kind: inplace.Changed, Path: u.path, Err: fmt.Errorf(format, args...)}
}

// checkNames refuses a record that names anything but FILE's own
// artifacts: it only says which backup.
func (u *undo) checkNames() error {
	rec, recPath := u.rec, u.rp.UndoRecord()
	if rec.File != u.place.Base {
		return u.refused("%s is the undo record of %q, not of %s: refusing it", recPath, rec.File, u.path)
	}
	if _, ok := u.rp.IsBackup(rec.Backup); !ok {
		return u.refused("%s names the backup %q, which is not one of %s's: refusing it", recPath, rec.Backup, u.path)
	}
	u.q = rec.Quarantine
	if u.q != nil && u.q.Name != filepath.Base(u.rp.Quarantine()) {
		return u.refused("%s names the quarantine %q, which is not %s's: refusing it", recPath, u.q.Name, u.path)
	}
	u.written = rec.Written
	if u.written == nil {
		u.written = &fileSum{Size: rec.Size, SHA256: rec.SHA256}
	}
	return nil
}

// check tells where the undo stands, under the lock: FILE as the repair
// left it, or already restored by an undo stopped after its rename (then
// Resumed); the quarantine as the repair left it, or already restored.
// Anything else is refused.
func (u *undo) check() (*UndoOutcome, error) {
	path, rec := u.path, u.rec
	backup := filepath.Join(u.rp.Dir, rec.Backup)
	d := u.rdir
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, u.refused("%w: %s is no longer the regular file repair wrote", inplace.ErrFileChanged, path)
	}
	out := &UndoOutcome{Path: path, Backup: backup}
	switch {
	case u.written.matches(path):
		if d.Absent(rec.Backup) || d.CheckRegularOrAbsent(rec.Backup) != nil {
			return nil, &inplace.Refusal{Kind: inplace.NotRollout, Path: path, Err: fmt.Errorf("the backup %s is missing", backup)}
		}
		if rec.Original != nil && !rec.Original.matchesIn(d, rec.Backup) {
			return nil, u.refused("%w: the backup %s is not the file the repair replaced", inplace.ErrFileChanged, backup)
		}
		if id := rec.ThreadID; id != "" {
			if got := rollout.MetaThreadID(path); got != id {
				return nil, u.refused("%s is the undo record of thread %s, and %s is thread %q: refusing it", u.rp.UndoRecord(), id, path, got)
			}
		}
	case rec.Original != nil && rec.Original.matches(path) && d.Absent(rec.Backup):
		out.Resumed = true // stopped after its rename
	default:
		size, _, _ := fileHash(path, -1)
		return nil, u.refused("%w: %s is not the file repair wrote (it changed since: %d bytes, was %d)", inplace.ErrFileChanged, path, size, u.written.Size)
	}
	if u.q == nil {
		return out, nil
	}
	u.qpath = u.rp.Quarantine()
	qname := filepath.Base(u.qpath)
	switch {
	case u.q.before(d, qname):
		u.restored = true
	case u.q.after(d, qname):
	default:
		return nil, u.refused("%w: %s changed since the repair", inplace.ErrFileChanged, u.qpath)
	}
	out.Quarantine, out.Deleted = u.qpath, u.q.Before == nil
	if !u.restored {
		if n, err := countLines(u.qpath, u.q.keep()); err == nil {
			out.Removed = n
		}
	}
	return out, nil
}

// replace puts the backup back over FILE through the write guard.
func (u *undo) replace(g *inplace.Guard, backup string) (*inplace.Late, error) {
	f, err := u.rdir.OpenExisting(filepath.Base(backup))
	if err == nil && f == nil {
		err = &fs.PathError{Op: "open", Path: backup, Err: fs.ErrNotExist}
	}
	var from int64
	if err == nil {
		from, err = inplace.FirstDifferenceFrom(u.path, f)
		f.Close()
	}
	if err != nil {
		return nil, &inplace.Refusal{Kind: inplace.WriteFailed, Path: u.path, Err: err}
	}
	if from < 0 {
		from = u.written.Size // the same bytes: nothing below a cutoff changes
	}
	if _, r := inplace.StaleProjection(u.path, from); r != nil {
		return nil, r // an unreadable history database: unknown what goes stale
	}
	late, err := g.Replace(inplace.Switch{Read: u.written.Size, From: from, Place: u.place, Force: u.opts.Force, At: u.at}, func() error {
		return u.rdir.RenameTo(filepath.Base(backup), u.path)
	})
	if err != nil {
		var r *inplace.Refusal
		if errors.As(err, &r) {
			return nil, r
		}
		return nil, &inplace.Refusal{Kind: inplace.WriteFailed, Path: u.path, Err: err}
	}
	return late, nil
}

// finish restores the quarantine and the projection rows, then removes
// the record: each step accepts the state after it (an undo run again).
func (u *undo) finish(out *UndoOutcome) error {
	path := u.path
	if u.qpath != "" && !u.restored {
		var err error
		if out.Deleted {
			err = u.rdir.Remove(filepath.Base(u.qpath))
		} else {
			err = truncateCopy(u.rdir, filepath.Base(u.qpath), u.q.keep())
		}
		if err != nil {
			return &inplace.Refusal{Kind: inplace.WriteFailed, Path: u.qpath, Err: fmt.Errorf("%s was restored, but its quarantine could not be: %w (run repair --undo again)", path, err)}
		}
	}
	u.at("quarantine")
	if err := restoreUndoProjection(path, u.rp, u.rdir, u.rec.Projection, u.rec.ThreadID); err != nil {
		return &inplace.Refusal{Kind: inplace.WriteFailed, Path: path, Err: fmt.Errorf("%s was restored, but Codex's projection of its thread could not be: %w (run repair --undo again)", path, err)}
	}
	out.Projection = u.rec.Projection != nil
	u.at("projection")
	recPath := u.rp.UndoRecord()
	if err := u.rdir.Remove(filepath.Base(recPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &inplace.Refusal{Kind: inplace.WriteFailed, Path: recPath, Err: err}
	}
	if err := u.rdir.Sync(); err != nil {
		return fmt.Errorf("%s was restored, but syncing %s failed: %w", path, u.rp.Dir, err)
	}
	if u.rp.InHome() {
		artifacts.TidyDir(u.rdir)
	}
	return nil
}

// findRecord reads the undo record of FILE: in its place, or where an
// older rollout left it inside a Codex home, beside the file. It returns
// the place the record is in (its backup and quarantine are there too).
//
// store is place.Dir held open (nil: it does not exist); the directory
// returned is the record's: store, or the place beside, opened here.
func findRecord(place artifacts.Place, store *outfile.Dir) (artifacts.Place, *outfile.Dir, *undoRecord, error) {
	places := []artifacts.Place{place}
	if place.InHome() {
		places = append(places, place.Beside())
	}
	for i, p := range places {
		d := store
		if i > 0 {
			var err error
			if d, err = outfile.OpenDir(p.Dir); err != nil {
				return p, nil, nil, err
			}
		}
		if d == nil {
			continue
		}
		rec, err := readRecord(p, d)
		if rec == nil || err != nil {
			if i > 0 {
				d.Close()
			}
			if err != nil {
				return p, nil, nil, err
			}
			continue
		}
		return p, d, rec, nil
	}
	return place, nil, nil, nil
}

// readRecord reads the undo record of place p in d (nil: none).
func readRecord(p artifacts.Place, d *outfile.Dir) (*undoRecord, error) {
	f, err := d.OpenExisting(filepath.Base(p.UndoRecord()))
	if err != nil {
		return nil, &inplace.Refusal{Kind: inplace.NotRegular, Path: p.UndoRecord(), Err: err}
	}
	if f == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	f.Close()
	if err != nil {
		return nil, err
	}
	var rec undoRecord
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&rec); err != nil || rec.Version < 1 || rec.Version > UndoVersion || rec.Backup == "" {
		return nil, &inplace.Refusal{Kind: inplace.Changed, Path: p.UndoRecord(), Err: fmt.Errorf("%s: not an undo record this version of rollout reads", p.UndoRecord())}
	}
	return &rec, nil
}

// keep is the size the quarantine had before the repair.
func (q *undoQuarantine) keep() int64 {
	if q.Before == nil {
		return 0
	}
	return q.Before.Size
}

// after: the quarantine, the entry name of dir, is as the repair left it.
func (q *undoQuarantine) after(dir *outfile.Dir, name string) bool {
	size, _, err := fileHashIn(dir, name, -1)
	if err != nil || size != q.AfterSize {
		return false
	}
	if q.Before == nil {
		return true
	}
	_, sum, err := fileHashIn(dir, name, q.Before.Size)
	return err == nil && sum == q.Before.SHA256
}

// before: the quarantine is as it was before the repair (an undo that
// stopped after restoring it).
func (q *undoQuarantine) before(dir *outfile.Dir, name string) bool {
	if q.Before == nil {
		return dir.Absent(name)
	}
	return q.Before.matchesIn(dir, name)
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

// truncateCopy replaces the entry name of dir, atomically, by its first n
// bytes (keeping its metadata).
func truncateCopy(dir *outfile.Dir, name string, n int64) error {
	src, err := dir.OpenExisting(name)
	if err != nil {
		return err
	}
	if src == nil {
		return &fs.PathError{Op: "open", Path: dir.Join(name), Err: fs.ErrNotExist}
	}
	defer src.Close()
	return outfile.WriteIn(dir, name, outfile.Options{}, func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(src, n))
		return err
	})
}
