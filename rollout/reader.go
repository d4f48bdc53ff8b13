package rollout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// readBufferSize is bufio's buffer: lines up to this size are read in place
// without a copy. Most lines are small; the multi-megabyte ones (images,
// tool output) are few, so 4 MiB covers nearly all bytes for little memory.
const readBufferSize = 4 << 20

// DefaultMaxLineBytes is the default for --max-line-bytes: real lines reach
// tens of MB (inline images, tool output), so the cap is generous.
const DefaultMaxLineBytes = 64 << 20

// Reader splits a rollout into records. It holds at most one line in memory
// (up to the maximum line size); longer lines are skipped and reported as
// oversized, never truncated into a bogus record. A line longer than its
// read buffer costs one more buffer of the line's size (see lineSource).
type Reader struct {
	src  lineSource
	max  int64
	line int
	rec  Record
	err  error
}

// lineBuffers recycles the readers' buffers: allocating and zeroing 4 MiB
// per file was 15% of verifying a directory of small sessions.
var lineBuffers = freeList[*bufio.Reader]{New: func() *bufio.Reader { return bufio.NewReaderSize(nil, readBufferSize) }}

// freeList keeps up to maxFree values let go of for the next Get. Not a
// sync.Pool: each collection empties one, and a 4 MiB buffer allocated
// per small file paces the collector to run every few files, so that most
// files of a tree got new buffers and decoders. What it keeps is bounded
// by the readers open at once (a worker's file and the segments it
// continues), which held as much while they were open.
type freeList[T any] struct {
	New  func() T // makes a value when none is kept (nil: Get returns the zero T)
	mu   sync.Mutex
	free []T
}

const maxFree = 16

func (l *freeList[T]) Get() T {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		v := l.free[n-1]
		var zero T
		l.free[n-1] = zero
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return v
	}
	l.mu.Unlock()
	if l.New == nil {
		var zero T
		return zero
	}
	return l.New()
}

func (l *freeList[T]) Put(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < maxFree {
		l.free = append(l.free, v)
	}
}

// NewReader reads records from r. maxLine <= 0 means DefaultMaxLineBytes.
// Release hands its buffer on to the next Reader. When r can be read again
// by offset (RereaderOf), a long line is read into a buffer of its exact
// size.
func NewReader(r io.Reader, maxLine int64) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	br := lineBuffers.Get()
	br.Reset(r)
	src := lineSource{br: br, at: RereaderOf(r)}
	src.feed, _ = r.(*LinePipe)
	return &Reader{src: src, max: maxLine}
}

// Release returns the read buffer for reuse; the Reader and the records it
// returned must not be used afterwards. Calling it is optional.
func (rd *Reader) Release() {
	if rd.src.br == nil {
		return
	}
	rd.src.br.Reset(nil)
	lineBuffers.Put(rd.src.br)
	rd.src.release()
	if rd.err == nil {
		rd.err = errors.New("rollout: Reader used after Release")
	}
}

// Next returns the next record, or io.EOF after the last one. Any other error
// is a read error of the underlying stream (wrapped with the line number).
func (rd *Reader) Next() (*Record, error) {
	if rd.err != nil {
		return nil, rd.err
	}
	rec := &rd.rec
	*rec = Record{Line: rd.line + 1, Offset: rd.src.off, payMembers: rec.payMembers[:0]}
	r, err := rd.src.next(rd.max+2, nil) // +2: the terminator does not count
	if err != nil {
		rd.err = fmt.Errorf("reading line %d: %w", rec.Line, err)
		return nil, rd.err
	}
	if r.size == 0 {
		rd.err = io.EOF
		return nil, io.EOF
	}
	rd.line++
	oversized := r.oversized
	if !oversized {
		raw, eol := r.split()
		rec.EOL = eol
		rec.Raw, rec.Size = raw, int64(len(raw))
		oversized = rec.Size > rd.max
	}
	if oversized {
		size := r.size
		rec.Raw, rec.EOL, rec.Size = nil, "", size
		switch {
		case r.terminated && size >= 2 && r.tail[0] == '\r':
			rec.EOL, rec.Size = "\r\n", size-2
		case r.terminated:
			rec.EOL, rec.Size = "\n", size-1
		}
		rec.Shape = ShapeOversized
		return rec, nil
	}
	classify(rec)
	return rec, nil
}

// SplitEOL splits a line into its body and terminator: "\n", or "\r\n"
// with every carriage return before the "\n" ("\r\r\n": one line/crlf
// fix removes them all), or "" for a last line without one.
func SplitEOL(line []byte) (body []byte, eol string) {
	if !bytes.HasSuffix(line, []byte("\n")) {
		return line, ""
	}
	i := len(line) - 1
	for i > 0 && line[i-1] == '\r' {
		i--
	}
	return line[:i], string(line[i:])
}

// IsCRLF reports whether a terminator has carriage returns ("\r\n",
// "\r\r\n", ...).
func IsCRLF(eol string) bool { return len(eol) > 1 }

// Rereader reads the stream's bytes again by offset (a record's Offset),
// or is nil when the stream cannot be read again (a pipe, a decompressed
// stream).
func (rd *Reader) Rereader() io.ReaderAt { return rd.src.at }

// Line is the number of lines read so far.
func (rd *Reader) Line() int { return rd.line }

// Offset is the number of bytes read so far.
func (rd *Reader) Offset() int64 { return rd.src.off }

func classify(rec *Record) {
	raw := rec.Raw
	if len(bytes.TrimSpace(raw)) == 0 {
		rec.Shape = ShapeBlank
		rec.ControlChar = hasRawControl(raw)
		rec.InvalidUTF8 = !utf8.Valid(raw)
		return
	}
	if c := checkRecordLine(raw, rec); c.object {
		rec.Shape = ShapeObject
		rec.parsed = true
		// Valid JSON has no raw control bytes; an escaped NUL is the case
		// that still breaks downstream tools (databases, terminals).
		rec.ControlChar = c.escNUL
		rec.InvalidUTF8 = c.badUTF8
		rec.LoneSurrogate = c.lone
		rec.DuplicateKeys, rec.DuplicateKeyCount = c.dups, c.ndups
		return
	}
	rec.typ, rec.pay, rec.ts, rec.ord = [2]int{}, [2]int{}, [2]int{}, [2]int{} // noted before validation failed
	rec.payMembers, rec.payNoted = rec.payMembers[:0], false
	rec.InvalidUTF8 = !utf8.Valid(raw)
	rec.ControlChar = hasRawControl(raw) || bytes.Contains(raw, []byte(`\u0000`))
	if parts := splitObjects(raw); len(parts) > 1 {
		rec.Shape = ShapeConcatenated
		rec.Parts = parts
		return
	}
	if parts := gluedParts(raw); parts != nil {
		rec.Shape = ShapeGlued
		rec.Parts = parts
		rec.BOM = rec.Offset == 0 && parts[0][0] == len(utf8BOM) && bytes.HasPrefix(raw, utf8BOM)
		return
	}
	if rec.EOL == "" && !json.Valid(raw) {
		rec.Shape = ShapeTorn // a crash mid-write: the text does not even parse
		return
	}
	rec.Shape = ShapeInvalid
}

func hasRawControl(raw []byte) bool {
	for _, b := range raw {
		if b < 0x20 && b != '\t' && b != '\r' {
			return true
		}
	}
	return false
}

// splitObjects finds the top-level objects of a line holding several of them
// back to back (optionally separated by white space). It returns nil unless
// every piece is a valid JSON object.
func splitObjects(raw []byte) [][2]int {
	var parts [][2]int
	i := 0
	for {
		for i < len(raw) && isSpace(raw[i]) {
			i++
		}
		if i == len(raw) {
			break
		}
		if raw[i] != '{' {
			return nil
		}
		end := ValueEnd(raw, i)
		if end < 0 || !validObject(raw[i:end]) {
			return nil
		}
		parts = append(parts, [2]int{i, end})
		i = end
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// utf8BOM is the byte order mark editors put before UTF-8 text.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}
