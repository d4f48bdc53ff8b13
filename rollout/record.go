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
	ShapeGlued                     // torn bytes, then complete records on the same line
)

func (s Shape) String() string {
	return [...]string{"object", "blank", "invalid", "torn", "concatenated", "oversized", "glued"}[s]
}

// Record is one physical line of a rollout.
//
// Raw is only valid until the next call to Reader.Next: keep a copy of what
// must outlive the line.
type Record struct {
	Line   int    // 1-based physical line number
	Offset int64  // byte offset of the first byte of the line
	Raw    []byte // the line without its terminator; nil when oversized
	EOL    string // "\n", "\r\n" ("\r\r\n": all the CRs before the LF), or "" for a last line without terminator
	Size   int64  // length of the line without terminator (also when oversized)
	Shape  Shape

	// Parts holds the [start,end) byte ranges of each object when Shape is
	// ShapeConcatenated, and of each complete record after the torn bytes
	// (Raw[:Parts[0][0]]) when it is ShapeGlued; relative to Raw.
	Parts [][2]int

	InvalidUTF8 bool // Raw holds bytes that are not UTF-8
	ControlChar bool // raw control bytes, or an escaped NUL inside a string
	// LoneSurrogate: a string escapes half of a UTF-16 surrogate pair
	// (\ud800 alone): not Unicode text.
	LoneSurrogate bool
	// BOM: the line is the file's first and begins with a UTF-8 byte order
	// mark (EF BB BF) that an editor added; the records after it are the
	// Parts of a ShapeGlued line, the mark its torn bytes.
	BOM bool
	// DuplicateKeys are keys repeated within one object of the line (the
	// first few), DuplicateKeyCount how many repeats in all.
	DuplicateKeys     []string
	DuplicateKeyCount int

	parsed            bool
	typ, pay, ts, ord [2]int // value ranges in Raw of top-level members; {0,0} = absent
	payload           *gjson.Result
	metaPayload       *gjson.Result // MetaPayload, once made
	meta              *Meta         // Meta, once read

	// payMembers are the members of the payload object in order, noted by
	// the validator as it passed them (payNoted); see PayloadMembers.
	payMembers []memberRange
	payNoted   bool
}

// memberRange is where a member's key (between its quotes) and value lie
// in Raw.
type memberRange struct{ key, val [2]int }

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
	// Lines from the reader were routed while validated; this walk is for
	// records built elsewhere (the objects of a concatenated line). Values
	// are skipped, not parsed: a payload of megabytes costs one memchr pass.
	Members(r.Raw, func(key []byte, start, end int) bool {
		r.noteMember(key, start, end)
		return true
	})
}

// noteMember records the value range of a top-level member the record
// routes on.
func (r *Record) noteMember(key []byte, start, end int) {
	var dst *[2]int
	switch string(key) {
	case "type":
		dst = &r.typ
	case "payload":
		dst = &r.pay
	case "timestamp":
		dst = &r.ts
	case "ordinal":
		dst = &r.ord
	default:
		return
	}
	if dst[1] == 0 { // duplicate keys: the first wins, as in gjson
		*dst = [2]int{start, end}
	}
}

func (r *Record) field(f *[2]int) []byte {
	r.parse()
	if f[1] == 0 {
		return nil
	}
	return r.Raw[f[0]:f[1]]
}

// Type is the envelope's "type" (for bare-era lines: the item type). A
// known line type is not copied: every line asks for its type.
func (r *Record) Type() string {
	v := r.field(&r.typ)
	if s, ok := StringValue(v); ok {
		if t, known := lineTypeNames[string(s)]; known {
			return t
		}
	}
	return DecodeString(v)
}

// HasType reports whether the line has a top-level "type" member.
func (r *Record) HasType() bool { return r.field(&r.typ) != nil }

// PayloadBytes is the raw JSON of the envelope's "payload" (nil when absent),
// a view into Raw.
func (r *Record) PayloadBytes() []byte { return r.field(&r.pay) }

// PayloadOffset is the byte offset of the payload inside Raw, or -1.
func (r *Record) PayloadOffset() int {
	if r.PayloadBytes() == nil {
		return -1
	}
	return r.pay[0]
}

// PayloadMembers walks the members of the payload object as Members does,
// with value ranges relative to PayloadBytes. The validator noted them on
// its pass over a line from a Reader, so the payload (megabytes of tool
// output or images) is not scanned a second time.
func (r *Record) PayloadMembers(fn func(key []byte, start, end int) bool) {
	p := r.PayloadBytes()
	if p == nil {
		return
	}
	if !r.payNoted {
		Members(p, fn)
		return
	}
	base := r.pay[0]
	for _, m := range r.payMembers {
		if !fn(r.Raw[m.key[0]:m.key[1]], m.val[0]-base, m.val[1]-base) {
			return
		}
	}
}

// Payload is the envelope's "payload" as a gjson value (a copy: use
// PayloadBytes on hot paths with large payloads).
func (r *Record) Payload() gjson.Result {
	if r.payload == nil {
		var res gjson.Result
		if b := r.PayloadBytes(); b != nil {
			res = gjson.Parse(string(b))
		}
		r.payload = &res
	}
	return *r.payload
}

// bulkyMetaKeys are the members of a session_meta payload that hold text
// (the model's instructions, tens of KB) and no fact a reader of the
// session_meta looks up.
var bulkyMetaKeys = map[string]bool{"base_instructions": true, "instructions": true, "user_instructions": true,
	"developer_instructions": true, "dynamic_tools": true}

// MetaPayload is Payload without the bulky members of a session_meta
// (bulkyMetaKeys), the others in their order: each lookup in a
// session_meta scanned its instructions again, which was most of the cost
// of a small file.
func (r *Record) MetaPayload() gjson.Result {
	if r.metaPayload == nil {
		m := r.metaPayloadOf()
		r.metaPayload = &m
	}
	return *r.metaPayload
}

func (r *Record) metaPayloadOf() gjson.Result {
	p := r.PayloadBytes()
	if p == nil {
		return gjson.Result{}
	}
	var b []byte
	dropped := false
	r.PayloadMembers(func(key []byte, start, end int) bool {
		if bulkyMetaKeys[string(key)] {
			dropped = true
			return true
		}
		if b == nil {
			b = append(make([]byte, 0, 1024), '{')
		} else {
			b = append(b, ',')
		}
		// The key as written: its raw bytes, escapes kept, in quotes.
		b = append(append(append(b, '"'), key...), '"', ':')
		b = append(b, p[start:end]...)
		return true
	})
	if !dropped {
		return r.Payload()
	}
	if b == nil {
		return gjson.Parse("{}")
	}
	return gjson.Parse(string(append(b, '}')))
}

// Meta is the record read as a session_meta (MetaOf its MetaPayload),
// read once: the replay and the lineage both ask.
func (r *Record) Meta() Meta {
	if r.meta == nil {
		m := MetaOf(r.Line, r.Offset, r.MetaPayload())
		r.meta = &m
	}
	return *r.meta
}

// Timestamp is the raw JSON value of "timestamp" (nil when absent).
func (r *Record) Timestamp() []byte { return r.field(&r.ts) }

// Ordinal is the line's "ordinal"; ok is false when it has none.
func (r *Record) Ordinal() (n int64, ok bool) {
	b := r.field(&r.ord)
	if b == nil {
		return 0, false
	}
	if n, ok := digits(b); ok {
		return n, true // every line of a paginated file: not copied for gjson
	}
	return gjson.ParseBytes(b).Int(), true
}

// digits reads a non-negative decimal integer of up to 18 digits.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// OrdinalRange is the byte range of the ordinal's digits in Raw.
func (r *Record) OrdinalRange() (start, end int, ok bool) {
	if r.field(&r.ord) == nil {
		return 0, 0, false
	}
	return r.ord[0], r.ord[1], true
}

// Get reads a top-level field of the line.
func (r *Record) Get(path string) gjson.Result {
	if r.Shape != ShapeObject {
		return gjson.Result{}
	}
	return gjson.GetBytes(r.Raw, path)
}

// DecodeString decodes a raw JSON string value; non-strings give "".
func DecodeString(v []byte) string {
	if s, ok := StringValue(v); ok {
		return string(s)
	}
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	return gjson.ParseBytes(v).String()
}
