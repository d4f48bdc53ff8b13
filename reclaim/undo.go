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
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/rollout-dev/rollout/internal/outfile"
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
	Restored int // byte ranges put back
}

// Undo restores the original bytes of a reclaimed rollout (path names the
// original or the reclaimed file). It checks that the reclaimed file is the
// one reclaim wrote and that the restored bytes hash to the original's, and
// removes the archive only then.
func Undo(path string) (*UndoResult, error) {
	plain := strings.TrimSuffix(path, ".zst")
	archive := plain + ArchiveSuffix
	tr, err := readTrailer(archive)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(plain)
	res := &UndoResult{Path: filepath.Join(dir, tr.Path), From: filepath.Join(dir, tr.Result), Archive: archive}
	if sum, err := contentSHA256(res.From); err != nil {
		return nil, err
	} else if sum != tr.ResultSHA256 {
		return nil, fmt.Errorf("%s: %w", res.From, ErrChangedSinceReclaim)
	}
	src, err := rollout.Open(res.From, nil)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fi, err := os.Stat(res.From)
	if err != nil {
		return nil, err
	}
	out, err := outfile.Create(res.Path, outfile.Options{CopyFrom: fi, CopyXattrsFrom: res.From})
	if err != nil {
		return nil, err
	}
	defer out.Abort()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(out, h), 256<<10)
	r := bufio.NewReaderSize(src, 256<<10)
	var pos int64
	err = eachCut(archive, func(c archiveCut) error {
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
	if err := out.Commit(); err != nil {
		return nil, err
	}
	if res.From != res.Path {
		if err := os.Remove(res.From); err != nil {
			return res, err
		}
	}
	if err := os.Remove(archive); err != nil {
		return res, err
	}
	return res, outfile.SyncDir(dir)
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
