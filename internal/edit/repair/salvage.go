package repair

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"path/filepath"
	"strconv"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// The salvage of a zstd input cut short (a copy interrupted, `head -c`):
// the decoder hands out the content of every block the file holds whole,
// then stops. The lines decoded are the rollout, analysed and repaired as
// any other (the torn one the cut leaves is a line/torn-tail, quarantined
// as such); the compressed bytes from the first block the file does not
// hold whole (rollout.ZstdCut) are kept in the quarantine as base64, so
// that nothing of the input is dropped even with --no-backup. The salvage
// goes with line/torn-tail's fix: it removes the end of a file cut short,
// as that fix does, and is selected with it.

// Salvage is what a repair keeps of a zstd input cut short.
type Salvage struct {
	Offset  int64 // where the unreadable tail starts in the file as stored
	Size    int64 // the file's size as stored (the tail is Size-Offset bytes)
	Decoded int64 // the bytes decoded before the tail: its whole lines and the torn one
	Line    int   // the line the tail continues (the whole lines decoded + 1)
	// Duplicate: the quarantine already held the tail's entry (an earlier
	// repair of the same input).
	Duplicate bool
}

// TailBytes is the size of the unreadable tail.
func (s *Salvage) TailBytes() int64 { return s.Size - s.Offset }

// tornTail is the fix the salvage goes with.
const tornTail = "line/torn-tail"

// cutReader is the decoded input of a salvage: a stream cut short ends
// there (io.EOF instead of io.ErrUnexpectedEOF), so that the last line
// decoded is seen as the torn tail it is. It counts what it hands out.
type cutReader struct {
	io.ReadCloser
	n    int64
	last byte // the last byte handed out
	cut  bool // the decoder found the stream cut short
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if n > 0 {
		c.n += int64(n)
		c.last = p[n-1]
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		c.cut, err = true, io.EOF
	}
	return n, err
}

// salvages reports whether this repair salvages a zstd input cut short:
// the input is zstd and line/torn-tail's fix is selected.
func (t *Txn) salvages() bool {
	sel := t.opts.Fix
	if sel == nil {
		sel, _ = checks.SelectFixes(nil)
	}
	return t.in == rollout.Zstd && sel[tornTail]
}

// planSalvage plans the salvage of an input the decoder found cut short,
// or returns the *reconstruct.ReadError a repair without salvage returns:
// when the headers do not show a cut (the stream is corrupt, not cut), or
// the lines decoded cannot be repaired (an unknown history mode, a torn
// line left as it is or too long to read).
func (t *Txn) planSalvage(in *input, walk *rollout.ZstdCut) error {
	line := t.Input.Records + 1
	if in.cut.n > 0 && in.cut.last != '\n' {
		line-- // the torn line
	}
	readErr := &reconstruct.ReadError{Path: t.Path, Line: line, Err: io.ErrUnexpectedEOF}
	cut, off, tail, err := walk.End()
	if err != nil || !cut || t.Input.State.FailClosed {
		return readErr
	}
	for _, u := range t.Fixes.Left {
		if u.Rule == tornTail {
			return readErr
		}
	}
	if in.cut.n > 0 && in.cut.last != '\n' {
		for _, f := range t.Input.Findings {
			if f.Rule == "line/oversized" && f.Line == line {
				return readErr // the torn line was not read: it would stay, torn
			}
		}
	}
	t.Salvage = &Salvage{Offset: off, Size: in.raw.n, Decoded: in.cut.n, Line: line}
	t.tail = bytes.Clone(tail)
	return nil
}

// salvageEntry is the quarantine entry of the unreadable tail: where it
// was (the line it continues, the offset in the decoded rollout, the
// file and the offset in it as stored) and its bytes as base64.
func (t *Txn) salvageEntry() []byte {
	s := t.Salvage
	b := []byte(`{"line":`)
	b = strconv.AppendInt(b, int64(s.Line), 10)
	b = append(b, `,"byte_offset":`...)
	b = strconv.AppendInt(b, s.Decoded, 10)
	b = append(b, `,"reason":`...)
	b = rollout.AppendJSONString(b, tornTail)
	b = append(b, `,"file":`...)
	b = rollout.AppendJSONString(b, filepath.Base(t.Path))
	b = append(b, `,"compressed_offset":`...)
	b = strconv.AppendInt(b, s.Offset, 10)
	b = append(b, `,"compressed_size":`...)
	b = strconv.AppendInt(b, s.Size, 10)
	b = append(b, `,"compressed_base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, t.tail)
	return append(b, "\"}\n"...)
}
