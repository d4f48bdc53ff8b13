// Package rollout is the first stage of the flow: bytes -> records. It reads
// rollouts (plain, zstd, stdin, Codex session directories) as a stream of
// physical lines with their 1-based line number, byte offset and raw bytes,
// classifies each line's shape (blank, CRLF, torn, concatenated, invalid), and
// knows the static facts of the format: eras, line types, item types and
// their id prefixes, UUIDv7 ids. It never re-encodes a line.
package rollout

import (
	"github.com/tidwall/gjson"
)

// Shape is what a physical line looks like before any meaning is given to it.
type Shape uint8

const (
	ShapeObject       Shape = iota // one JSON object
	ShapeBlank                     // empty or whitespace only
	ShapeInvalid                   // not one JSON object
	ShapeTorn                      // last line, no terminator, does not parse
	ShapeConcatenated              // several JSON objects on one line
	ShapeOversized                 // longer than the reader's maximum: not parsed
)

func (s Shape) String() string {
	return [...]string{"object", "blank", "invalid", "torn", "concatenated", "oversized"}[s]
}

// Record is one physical line of a rollout.
//
// Raw is only valid until the next call to Reader.Next: keep a copy of what
// must outlive the line.
type Record struct {
	Line   int    // 1-based physical line number
	Offset int64  // byte offset of the first byte of the line
	Raw    []byte // the line without its terminator; nil when oversized
	EOL    string // "\n", "\r\n", or "" for a last line without terminator
	Size   int64  // length of the line without terminator (also when oversized)
	Shape  Shape

	// Parts holds the [start,end) byte ranges of each object when Shape is
	// ShapeConcatenated, relative to Raw.
	Parts [][2]int

	InvalidUTF8 bool // Raw holds bytes that are not UTF-8
	ControlChar bool // raw control bytes, or an escaped NUL inside a string

	parsed bool
	typ    gjson.Result
	pay    gjson.Result
}

// End is the offset just past the line terminator.
func (r *Record) End() int64 { return r.Offset + r.Size + int64(len(r.EOL)) }

// Valid reports whether the line is one JSON object that can be read.
func (r *Record) Valid() bool { return r.Shape == ShapeObject }

func (r *Record) parse() {
	if r.parsed {
		return
	}
	r.parsed = true
	if r.Shape != ShapeObject {
		return
	}
	// One pass over the top level: envelope lines carry type before payload,
	// and the payload may be megabytes we only want to skip once.
	gjson.ParseBytes(r.Raw).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			if !r.typ.Exists() {
				r.typ = v
			}
		case "payload":
			if !r.pay.Exists() {
				r.pay = v
			}
		}
		return true
	})
}

// Type is the envelope's "type" (for bare-era lines: the item type).
func (r *Record) Type() string {
	r.parse()
	return r.typ.Str
}

// HasType reports whether the line has a top-level "type" member.
func (r *Record) HasType() bool {
	r.parse()
	return r.typ.Exists()
}

// Payload is the envelope's "payload"; it does not exist on bare-era lines.
func (r *Record) Payload() gjson.Result {
	r.parse()
	return r.pay
}

// Get reads a top-level field of the line.
func (r *Record) Get(path string) gjson.Result {
	if r.Shape != ShapeObject {
		return gjson.Result{}
	}
	return gjson.GetBytes(r.Raw, path)
}

// PayloadOffset is the byte offset of the payload inside Raw, or -1.
func (r *Record) PayloadOffset() int {
	p := r.Payload()
	if !p.Exists() {
		return -1
	}
	return p.Index
}
