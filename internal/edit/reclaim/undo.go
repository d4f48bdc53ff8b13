package reclaim

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/rollout"
)

// ErrNotReclaimed: there is no archive for the file.
var ErrNotReclaimed = errors.New("no reclaim archive")

// ErrChangedSinceReclaim: the file is no longer the one reclaim wrote.
var ErrChangedSinceReclaim = errors.New("the file changed since reclaim wrote it; undo would lose those changes")

// UndoResult says what Undo restored.
type UndoResult struct {
	Path     string // the restored original
	From     string // the reclaimed file it replaced
	Archive  string
	Restored int           // byte ranges put back
	Resumed  bool          // an undo stopped after its rename was finished
	Late     *inplace.Late // bytes appended to From while it was replaced, kept
	// Projection: the rows of Codex's history projection reclaim had
	// deleted were put back.
	Projection bool
}

// UndoOptions say how Undo replaces the file.
type UndoOptions struct {
	// Force replaces the file even while another process holds it open for
	// writing (what it writes next is lost).
	Force bool
	// Stage, when set (tests), is called at each step: "checked", "switch"
	// (right before the rename or removal), "renamed".
	Stage func(string)
}

// ErrNotThisFile is an archive whose last line names another file, or
// another thread, than the one it is the archive of.
var ErrNotThisFile = errors.New("the archive is not this file's")

// Undo restores the original bytes of a reclaimed rollout (path names the
// original or the reclaimed file). Every name it touches is derived from
// path: the archive's last line must name the same file and thread, or it
// is refused. It checks that the reclaimed file is the one reclaim wrote
// and that the restored bytes hash to the original's, replaces the file
// through the write guard (inplace.Guard.Replace), and removes the archive
// only then. Stopped at any point, it can be run again.
func Undo(path string, o UndoOptions) (*UndoResult, error) {
	at := func(s string) {
		if o.Stage != nil {
			o.Stage(s)
		}
	}
	plain := strings.TrimSuffix(path, ".zst")
	place, err := artifacts.For(plain)
	if err != nil {
		return nil, err
	}
	if err := place.Check(); err != nil {
		return nil, inplace.StoreRefusal(place.Dir, err)
	}
	archive, tr, err := findArchive(plain)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(plain)
	result := base
	if tr.ResultCompressed {
		result += ".zst"
	}
	if tr.Path != base || tr.Result != result {
		return nil, fmt.Errorf("%s: %w: it names %q and %q, not %s", archive, ErrNotThisFile, tr.Path, tr.Result, plain)
	}
	res := &UndoResult{Path: plain, From: plain, Archive: archive}
	if tr.ResultCompressed {
		res.From = plain + ".zst"
	}
	probe := res.From
	if outfile.Absent(probe) {
		probe = plain
	}
	if r := inplace.CheckCodexWriter(probe); r != nil {
		return nil, r // Codex is writing the thread: its appends are not ours to judge
	}
	// Where the undo stands: not begun (From is the result), or stopped
	// after its rename (the original is in place and From gone, or From
	// is the original itself).
	fromSum, fromErr := contentSHA256(res.From)
	switch {
	case fromErr == nil && fromSum == tr.ResultSHA256:
		if id := tr.ThreadID; id != "" {
			if got := rollout.MetaThreadID(res.From); got != id {
				return nil, fmt.Errorf("%s: %w: it is thread %s's, %s is thread %q", archive, ErrNotThisFile, id, res.From, got)
			}
		}
	case tr.Reclaimed >= 2 && isOriginal(plain, tr) && (res.From == plain || outfile.Absent(res.From)):
		res.Resumed = true
	case fromErr != nil:
		return nil, fromErr
	default:
		return nil, fmt.Errorf("%s: %w", res.From, ErrChangedSinceReclaim)
	}
	at("checked")
	if !res.Resumed {
		if err := restore(res, tr, place, o, at); err != nil {
			return nil, err
		}
	} else if err := resumeProjection(res, tr, place); err != nil {
		return nil, err
	}
	at("renamed")
	if err := removeArtifact(place, archive); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	place.Tidy()
	return res, outfile.SyncDir(filepath.Dir(plain))
}

// removeArtifact removes path, an artifact of place: in the store,
// relative to the directory Open checks (never through a path another
// user could redirect); beside the file (an older rollout's), by path.
func removeArtifact(place artifacts.Place, path string) error {
	if !place.InHome() || filepath.Dir(path) != filepath.Clean(place.Dir) {
		return os.Remove(path)
	}
	d, err := place.Open(false)
	if err != nil {
		return err
	}
	if d == nil {
		return &fs.PathError{Op: "remove", Path: path, Err: fs.ErrNotExist}
	}
	defer d.Close()
	return d.Remove(filepath.Base(path))
}

// restore rebuilds the original from the result and the archive, and puts
// it in place through the guard. A compressed result's plain original may
// already be in place (an undo stopped between its two steps): then only
// the .zst goes.
func restore(res *UndoResult, tr *archiveTrailer, place artifacts.Place, o UndoOptions, at func(string)) error {
	g, err := inplace.Lock(res.From)
	if err != nil {
		return err
	}
	defer g.Release()
	place.RemoveTemps() // a write or undo killed before its rename left them
	read, err := g.Size()
	if err != nil {
		return err
	}
	if sum, err := contentSHA256(res.From); err != nil || sum != tr.ResultSHA256 {
		return fmt.Errorf("%s: %w", res.From, ErrChangedSinceReclaim)
	}
	var out *outfile.File
	if res.From != res.Path && !outfile.Absent(res.Path) && !isOriginal(res.Path, tr) {
		return fmt.Errorf("%s exists and is not the original: refusing to replace it with the one restored from %s", res.Path, res.From)
	}
	if res.From == res.Path || !isOriginal(res.Path, tr) {
		if err := outfile.CheckRegularOrAbsent(res.Path); err != nil {
			return err
		}
		store, err := place.Open(true)
		if err != nil {
			return inplace.StoreRefusal(place.Dir, err)
		}
		defer store.Close()
		if out, err = rebuild(res, tr, place, store); err != nil {
			return err
		}
		defer out.Abort()
	}
	from := read // the original is in place already: no byte of it changes
	if out != nil {
		if from, err = inplace.FirstDifference(res.From, out.TempName()); err != nil {
			return err
		}
		if from < 0 {
			from = read
		}
	}
	if _, r := inplace.StaleProjection(res.From, from); r != nil {
		return r // an unreadable history database: unknown what goes stale
	}
	late, err := g.Replace(inplace.Switch{Read: read, From: from, Place: place, Force: o.Force, At: at}, func() error {
		if out != nil {
			if err := out.Commit(); err != nil {
				return err
			}
		}
		if res.From != res.Path {
			return os.Remove(res.From)
		}
		return nil
	})
	if err != nil {
		return err
	}
	res.Late = late
	at("replaced")
	return putBackProjection(res, tr, place)
}

// resumeProjection finishes an undo stopped after its rename: the original
// is in place, and the projection rows reclaim deleted may still wait in
// their file. They go back under the guard of the original, as in restore.
func resumeProjection(res *UndoResult, tr *archiveTrailer, place artifacts.Place) error {
	if outfile.Absent(place.ReclaimProjection()) {
		return nil
	}
	g, err := inplace.Lock(res.Path)
	if err != nil {
		return err
	}
	defer g.Release()
	return putBackProjection(res, tr, place)
}

// putBackProjection puts the projection rows reclaim deleted back over what
// Codex projected since from the reclaimed file, and removes their file.
func putBackProjection(res *UndoResult, tr *archiveTrailer, place artifacts.Place) error {
	rows := place.ReclaimProjection()
	saved, err := inplace.ReadProjectionRows(rows, nil)
	if err != nil {
		return fmt.Errorf("%s was restored, but not Codex's projection of its thread: %w (run reclaim --undo again)", res.Path, err)
	}
	if saved != nil {
		if tr.ThreadID != "" && saved.ThreadID != tr.ThreadID {
			return fmt.Errorf("%s holds thread %s's projection, and %s is thread %s's: refusing it", rows, saved.ThreadID, res.Path, tr.ThreadID)
		}
		if err := inplace.RestoreProjection(res.Path, saved); err != nil {
			return fmt.Errorf("%s was restored, but not Codex's projection of its thread: %w (run reclaim --undo again)", res.Path, err)
		}
		removeArtifact(place, rows)
		res.Projection = true
	}
	return nil
}

// rebuild writes the original, from the result and the archive's ranges,
// to a temporary file and checks it hashes to the original's.
//
// store is the directory of the artifacts, held open: the temporary file
// is made there (when it is on the file's file system).
func rebuild(res *UndoResult, tr *archiveTrailer, place artifacts.Place, store *outfile.Dir) (*outfile.File, error) {
	src, err := rollout.Open(res.From, nil)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fi, err := os.Stat(res.From)
	if err != nil {
		return nil, err
	}
	out, err := outfile.Create(res.Path, outfile.Options{CopyFrom: fi, CopyXattrsFrom: res.From, In: place.TempIn(store), RegularOnly: true})
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			out.Abort()
		}
	}()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(out, h), 256<<10)
	r := bufio.NewReaderSize(src, 256<<10)
	var pos int64
	err = eachCut(res.Archive, func(c archiveCut) error {
		if c.NewOffset < pos {
			return fmt.Errorf("%s: the ranges are out of order", res.Archive)
		}
		if _, err := io.CopyN(bw, r, c.NewOffset-pos); err != nil {
			return err
		}
		after := make([]byte, len(c.After))
		if _, err := io.ReadFull(r, after); err != nil || string(after) != c.After {
			return fmt.Errorf("%s: line %d does not hold what reclaim wrote", res.From, c.Line)
		}
		before := []byte(c.Before)
		if c.BeforeBase64 != "" {
			if before, err = base64.StdEncoding.DecodeString(c.BeforeBase64); err != nil {
				return err
			}
		}
		bw.Write(before)
		pos = c.NewOffset + int64(len(c.After))
		res.Restored++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(bw, r); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != tr.OriginalSHA256 {
		return nil, fmt.Errorf("%s: the restored bytes do not hash to the original's; nothing was changed", res.Path)
	}
	ok = true
	return out, nil
}

// isOriginal: path holds the original bytes (its plain content).
func isOriginal(path string, tr *archiveTrailer) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || (tr.OriginalSize > 0 && fi.Size() != tr.OriginalSize) {
		return false
	}
	sum, err := contentSHA256(path)
	return err == nil && sum == tr.OriginalSHA256
}

// findArchive reads the archive of plain: in its place, or where an older
// rollout left it in a Codex home, beside the file.
func findArchive(plain string) (string, *archiveTrailer, error) {
	all := archives(plain)
	for i, a := range all {
		if err := outfile.CheckRegularOrAbsent(a); err != nil {
			return a, nil, err
		}
		tr, err := readTrailer(a)
		if errors.Is(err, ErrNotReclaimed) && i < len(all)-1 {
			continue
		}
		if err == nil && (tr.Reclaimed < 1 || tr.Reclaimed > archiveVersion) {
			err = fmt.Errorf("%s: not an archive this version of rollout reads (version %d)", a, tr.Reclaimed)
		}
		return a, tr, err
	}
	return "", nil, ErrNotReclaimed
}

// readTrailer reads the archive's last line.
func readTrailer(archive string) (*archiveTrailer, error) {
	var tr *archiveTrailer
	err := eachLine(archive, func(line []byte) error {
		if bytes.HasPrefix(line, []byte(`{"reclaimed":`)) {
			tr = &archiveTrailer{}
			return json.Unmarshal(line, tr)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", archive, ErrNotReclaimed)
	}
	if err != nil {
		return nil, err
	}
	if tr == nil {
		return nil, fmt.Errorf("%s: the archive is incomplete", archive)
	}
	return tr, nil
}

func eachCut(archive string, fn func(archiveCut) error) error {
	return eachLine(archive, func(line []byte) error {
		if bytes.HasPrefix(line, []byte(`{"reclaimed":`)) {
			return nil
		}
		var c archiveCut
		if err := json.Unmarshal(line, &c); err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		return fn(c)
	})
}

func eachLine(archive string, fn func([]byte) error) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	defer dec.Close()
	// An archive line is one removed range: as large as the line it came from.
	rd := rollout.NewReader(dec, 1<<30)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Raw == nil {
			return fmt.Errorf("%s: line %d too long", archive, rec.Line)
		}
		if err := fn(rec.Raw); err != nil {
			return err
		}
	}
}
