package rollout

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"unicode/utf8"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack; deeper
// documents are reported as invalid.
const maxDepth = 10000

// lineCheck is the result of validating one line in a single pass.
type lineCheck struct {
	object  bool     // exactly one JSON object, surrounded by optional white space
	badUTF8 bool     // a string holds bytes that are not UTF-8
	escNUL  bool     // a string holds the escape \u0000
	lone    bool     // a string holds a lone surrogate escape (\ud800 unpaired)
	dups    []string // keys repeated in one object (at most maxDupKeys)
	ndups   int      // all repeated keys
}

// maxDupKeys bounds the repeated keys a line reports by name.
const maxDupKeys = 5

// checkLine validates a line as one JSON object and, in the same pass,
// notes invalid UTF-8 and escaped NULs inside strings. One pass instead of
// three (validate, utf8.Valid, search for \u0000) is what keeps verify well
// ahead of jq on multi-megabyte lines.
func checkLine(raw []byte) lineCheck { return checkRecordLine(raw, nil) }

// checkRecordLine is checkLine that also notes the top-level members rec
// routes on (type, payload, timestamp, ordinal) while it passes them, so the
// record needs no second walk over a multi-megabyte line.
func checkRecordLine(raw []byte, rec *Record) lineCheck {
	kb := keyBuffers.Get().(*[][]byte)
	v := validator{b: raw, rec: rec, keys: (*kb)[:0]}
	defer func() {
		if cap(v.keys) <= 256 {
			clear(v.keys[:cap(v.keys)]) // the pool keeps no line alive
			*kb = v.keys[:0]
			keyBuffers.Put(kb)
		}
	}()
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return lineCheck{}
	}
	end, ok := v.value(i, 0)
	if !ok || skipSpace(raw, end) != len(raw) {
		return lineCheck{badUTF8: v.badUTF8, escNUL: v.escNUL, lone: v.lone}
	}
	return lineCheck{object: true, badUTF8: v.badUTF8, escNUL: v.escNUL, lone: v.lone, dups: v.dups, ndups: v.ndups}
}

// keyBuffers recycles the validator's stack of open objects' keys: grown
// from nothing on every line it cost a third more CPU on short lines.
var keyBuffers = sync.Pool{New: func() any { b := make([][]byte, 0, 32); return &b }}

// validObject reports whether b is exactly one JSON object.
func validObject(b []byte) bool { return checkLine(b).object }

type validator struct {
	b       []byte
	rec     *Record // receives the top-level members; may be nil
	badUTF8 bool
	escNUL  bool
	lone    bool
	// keys holds the keys of the objects being walked, innermost last
	// (one slice for the whole line: no allocation per object).
	keys  [][]byte
	dups  []string
	ndups int
	// inPayload: the value being walked is the record's payload, whose
	// members (at depth 2) are noted for Record.PayloadMembers.
	inPayload bool
}

// seenKey notes key in the object whose keys start at keys[base] and
// reports whether it was already there. Objects with many keys switch to a
// map, so a hostile object of a million keys stays linear.
func (v *validator) seenKey(base int, key []byte, big *map[string]bool) bool {
	if *big != nil {
		if (*big)[string(key)] {
			return true
		}
		(*big)[string(key)] = true
		return false
	}
	for _, k := range v.keys[base:] {
		if string(k) == string(key) {
			return true
		}
	}
	v.keys = append(v.keys, key)
	if len(v.keys)-base > 32 {
		*big = make(map[string]bool, 64)
		for _, k := range v.keys[base:] {
			(*big)[string(k)] = true
		}
	}
	return false
}

func (v *validator) duplicate(key []byte) {
	v.ndups++
	if len(v.dups) < maxDupKeys {
		v.dups = append(v.dups, string(key))
	}
}

func (v *validator) value(i, depth int) (int, bool) {
	b := v.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		return v.object(i, depth+1)
	case c == '[':
		return v.array(i, depth+1)
	case c == '"':
		return v.str(i)
	case c == 't':
		return lit(b, i, "true")
	case c == 'f':
		return lit(b, i, "false")
	case c == 'n':
		return lit(b, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return number(b, i)
	}
	return i, false
}

func (v *validator) object(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	b := v.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	base := len(v.keys)
	defer func() { v.keys = v.keys[:base] }()
	var big map[string]bool
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		keyStart := i
		if i, ok = v.str(i); !ok {
			return i, false
		}
		key := b[keyStart+1 : i-1]
		if v.seenKey(base, key, &big) {
			v.duplicate(key)
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		valStart := skipSpace(b, i+1)
		payload := depth == 1 && v.rec != nil && string(key) == "payload" && v.rec.pay[1] == 0
		if depth == 1 {
			v.inPayload = payload // the objects of other members are not
		}
		if i, ok = v.value(valStart, depth); !ok {
			return i, false
		}
		switch {
		case depth == 1 && v.rec != nil:
			v.rec.noteMember(key, valStart, i)
			if payload && b[valStart] == '{' {
				v.rec.payNoted = true
			}
		case depth == 2 && v.inPayload:
			v.rec.payMembers = append(v.rec.payMembers, memberRange{
				key: [2]int{keyStart + 1, keyStart + 1 + len(key)}, val: [2]int{valStart, i}})
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func (v *validator) array(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	b := v.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = v.value(i, depth); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopMask has the high bit set in the lowest byte of x that a string scan
// must stop at ('"', '\\', a control character or a non-ASCII byte), and
// is zero when there is none. A subtraction borrows only out of a byte that
// is itself a stop, so bits above the lowest stop may be spurious but the
// lowest one is exact, which is all the scan uses. For a byte c with no
// borrow coming in: c-0x20 has its high bit set for c < 0x20 and c >= 0xa0;
// (c^'"')-1 for c == '"' and for c >= 0x80 except 0xa2; (c^'\\')-1 for
// c == '\\' and for c >= 0x80 except 0xdc. Together: exactly the stops.
func stopMask(x uint64) uint64 {
	quote := (x ^ (lsb * '"')) - lsb
	bslash := (x ^ (lsb * '\\')) - lsb
	return (quote | bslash | (x - lsb*0x20)) & msb
}

// scanPlain returns the index of the first byte from i on that a string
// scan must stop at, or len(b). Text stops every few dozen bytes (escaped
// new lines), base64 images run for megabytes: one word is tried first,
// then 32 bytes per step with one branch, and straight to the byte that
// stopped it.
func scanPlain(b []byte, i int) int {
	if i+8 <= len(b) {
		if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		m0 := stopMask(binary.LittleEndian.Uint64(w[0:8]))
		m1 := stopMask(binary.LittleEndian.Uint64(w[8:16]))
		m2 := stopMask(binary.LittleEndian.Uint64(w[16:24]))
		m3 := stopMask(binary.LittleEndian.Uint64(w[24:32]))
		if m0|m1|m2|m3 == 0 {
			continue
		}
		switch {
		case m0 != 0:
			return i + bits.TrailingZeros64(m0)/8
		case m1 != 0:
			return i + 8 + bits.TrailingZeros64(m1)/8
		case m2 != 0:
			return i + 16 + bits.TrailingZeros64(m2)/8
		default:
			return i + 24 + bits.TrailingZeros64(m3)/8
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// str validates the string starting at b[i] == '"'.
func (v *validator) str(i int) (int, bool) {
	b := v.b
	i++
	for {
		// Text stops every few dozen bytes (escaped new lines and quotes):
		// the first word is tried here, without a call.
		if i+8 <= len(b) {
			if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
			} else {
				i = scanPlain(b, i+8)
			}
		} else {
			i = scanPlain(b, i)
		}
		if i >= len(b) {
			return i, false
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch escapes[b[i+1]] {
			case escSimple:
				i += 2
			case escUnicode:
				if i+6 > len(b) || !hex4(b[i+2:i+6]) {
					return i, false
				}
				i += v.unicodeEscape(b, i)
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default: // non-ASCII: the whole run, without a scan per rune
			i = v.utf8Run(b, i)
		}
	}
}

// Kinds of the byte after a backslash in a string.
const (
	escInvalid = iota
	escSimple  // \" \\ \/ \b \f \n \r \t
	escUnicode // \uXXXX
)

// escapes classifies the byte after a backslash: one load instead of a
// chain of compares on the path every escaped new line takes.
var escapes = func() (t [256]uint8) {
	for _, c := range `"\\/bfnrt` {
		t[c] = escSimple
	}
	t['u'] = escUnicode
	return t
}()

// unicodeEscape notes what the escape \uXXXX at b[i:i+6] (hex digits
// checked) means for the line, an escaped NUL or half of a surrogate pair
// without its other half, and returns its length: 12 when it is the high
// half of a pair, with the low half.
func (v *validator) unicodeEscape(b []byte, i int) int {
	if b[i+2] == '0' && b[i+3] == '0' && b[i+4] == '0' && b[i+5] == '0' {
		v.escNUL = true
	}
	switch u := hexVal(b[i+2 : i+6]); {
	case u >= 0xd800 && u < 0xdc00:
		// A high surrogate must be followed by a low one.
		if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' && hex4(b[i+8:i+12]) {
			if l := hexVal(b[i+8 : i+12]); l >= 0xdc00 && l < 0xe000 {
				return 12
			}
		}
		v.lone = true
	case u >= 0xdc00 && u < 0xe000:
		v.lone = true
	}
	return 6
}

// utf8Run checks the run of non-ASCII bytes at b[i:] and returns its end.
func (v *validator) utf8Run(b []byte, i int) int {
	for i < len(b) && b[i] >= utf8.RuneSelf {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			v.badUTF8 = true
		}
		i += size
	}
	return i
}

// hexVal is the value of four hex digits (checked by hex4).
func hexVal(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c <= '9':
			r |= rune(c - '0')
		case c >= 'a':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

func hex4(h []byte) bool {
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func lit(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	var ok bool
	if b[i] == '0' {
		i++
	} else if i, ok = digits(i); !ok {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}
