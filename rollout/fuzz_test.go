package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tidwall/gjson"
)

// FuzzReader checks the reader's contract on any input: it never panics,
// the records tile the input (every byte belongs to exactly one record, in
// order), Raw is the input's bytes, and line numbers count up from 1.
//
// The first byte picks the setup, so the fuzzer explores oversized lines and
// chunked reads too: bit 7 set = a small maximum line size (1..64 bytes from
// the low 6 bits), bit 6 set = one-byte reads.
func FuzzReader(f *testing.F) {
	// The committed corpus in testdata/fuzz/FuzzReader holds the samples and
	// the tricky shapes; these keep `go test` meaningful without it.
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n\n{\"c\":"))
	f.Add([]byte("\xc5{\"a\":1}{\"b\":2}\n" + "{\"x\":\"0123456789012345678901234567890123456789\"}\r\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var max int64
		var r io.Reader = bytes.NewReader(data)
		if len(data) > 0 {
			if data[0]&0x80 != 0 {
				max = int64(data[0]&0x3f) + 1
			}
			if data[0]&0x40 != 0 {
				r = iotest.OneByteReader(r)
			}
		}
		limit := max
		if limit == 0 {
			limit = DefaultMaxLineBytes
		}
		rd := NewReader(r, max)
		var tiled []byte
		var prev int64
		for line := 1; ; line++ {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			if rec.Line != line {
				t.Fatalf("record %d has Line %d", line, rec.Line)
			}
			if rec.Offset != prev {
				t.Fatalf("line %d starts at %d, previous line ended at %d", line, rec.Offset, prev)
			}
			end := rec.End()
			if rec.Size < 0 || end > int64(len(data)) || end <= rec.Offset {
				t.Fatalf("line %d: [%d,%d) size %d outside the %d-byte input", line, rec.Offset, end, rec.Size, len(data))
			}
			tiled = append(tiled, data[rec.Offset:end]...)
			prev = end

			switch {
			case strings.TrimLeft(rec.EOL, "\r") == "\n": // every CR before the LF (SplitEOL)
				if !bytes.HasSuffix(data[:end], []byte(rec.EOL)) {
					t.Fatalf("line %d: EOL %q but the input has %q", line, rec.EOL, data[rec.Offset+rec.Size:end])
				}
			case rec.EOL == "":
				if end != int64(len(data)) {
					t.Fatalf("line %d has no terminator but is not the last", line)
				}
			default:
				t.Fatalf("line %d: EOL %q", line, rec.EOL)
			}
			if rec.Shape == ShapeOversized {
				if rec.Raw != nil || rec.Size <= limit {
					t.Fatalf("line %d oversized with Raw %v, Size %d, max %d", line, rec.Raw != nil, rec.Size, limit)
				}
				continue
			}
			if rec.Size > limit {
				t.Fatalf("line %d: %d bytes over the %d maximum but shaped %v", line, rec.Size, limit, rec.Shape)
			}
			if rec.Raw == nil || !bytes.Equal(rec.Raw, data[rec.Offset:rec.Offset+rec.Size]) {
				t.Fatalf("line %d: Raw %q differs from input[%d:%d]", line, rec.Raw, rec.Offset, rec.Offset+rec.Size)
			}
			if bytes.HasSuffix(rec.Raw, []byte("\r")) && rec.EOL == "\n" {
				t.Fatalf("line %d: CRLF read as LF", line)
			}
			checkShape(t, rec)
		}
		if !bytes.Equal(tiled, data) {
			t.Fatalf("records do not tile the input: %d of %d bytes", len(tiled), len(data))
		}
		if rd.Offset() != int64(len(data)) {
			t.Fatalf("Offset() = %d after EOF, want %d", rd.Offset(), len(data))
		}
	})
}

// checkShape checks a shape against what it claims, with gjson as the oracle.
func checkShape(t *testing.T, rec *Record) {
	t.Helper()
	raw := rec.Raw
	switch rec.Shape {
	case ShapeObject:
		if !gjson.ValidBytes(raw) || !gjson.ParseBytes(raw).IsObject() {
			t.Fatalf("line %d shaped object: %q", rec.Line, raw)
		}
		rec.Type()
		rec.Payload()
		rec.PayloadOffset()
		DetectEra(rec)
		if got, want := payloadMembers(rec), walkedMembers(rec.PayloadBytes()); !slices.Equal(got, want) {
			t.Fatalf("line %d: PayloadMembers %v, Members %v", rec.Line, got, want)
		}
	case ShapeConcatenated:
		if len(rec.Parts) < 2 {
			t.Fatalf("line %d concatenated with %d parts", rec.Line, len(rec.Parts))
		}
		last := 0
		for _, p := range rec.Parts {
			if p[0] < last || p[1] <= p[0] || p[1] > len(raw) {
				t.Fatalf("line %d: part %v out of order or outside %d bytes", rec.Line, p, len(raw))
			}
			if len(bytes.Trim(raw[last:p[0]], " \t\r\n")) != 0 {
				t.Fatalf("line %d: bytes %q between parts", rec.Line, raw[last:p[0]])
			}
			part := raw[p[0]:p[1]]
			if !gjson.ValidBytes(part) || !gjson.ParseBytes(part).IsObject() {
				t.Fatalf("line %d: part %v = %q is not an object", rec.Line, p, part)
			}
			last = p[1]
		}
		if len(bytes.Trim(raw[last:], " \t\r\n")) != 0 {
			t.Fatalf("line %d: trailing bytes after the parts", rec.Line)
		}
	case ShapeTorn:
		// Torn means the last line does not parse at all, as any JSON value
		// (encoding/json is the oracle).
		if rec.EOL != "" || json.Valid(raw) {
			t.Fatalf("line %d torn with EOL %q: %q", rec.Line, rec.EOL, raw)
		}
	case ShapeInvalid:
		if rec.EOL == "" && !json.Valid(raw) || gjson.ValidBytes(raw) && gjson.ParseBytes(raw).IsObject() {
			t.Fatalf("line %d invalid with EOL %q: %q", rec.Line, rec.EOL, raw)
		}
	case ShapeBlank:
		if len(bytes.TrimSpace(raw)) != 0 {
			t.Fatalf("line %d blank: %q", rec.Line, raw)
		}
	default:
		t.Fatalf("line %d: shape %v", rec.Line, rec.Shape)
	}
	if rec.Shape != ShapeConcatenated && rec.Parts != nil {
		t.Fatalf("line %d: %v with parts", rec.Line, rec.Shape)
	}
}
