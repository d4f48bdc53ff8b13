// Package mergepatch implements RFC 7396 JSON Merge Patch on immutable,
// order-preserving JSON values.
//
// It sits between record reading and reconstruction: rollout/ splits a file
// into records (raw bytes), reconstruct/ hands the `state` of each
// world_state record to Parse and replays patches onto the baseline with
// Apply. A Value is parsed once and never re-parsed: Apply copies only the
// objects on the path of a change and shares every other subtree, so callers
// may keep earlier values as checkpoints.
//
// Objects nested deeper than the first two levels, where merges rarely
// reach, are kept as their compact text and built on first use, so a
// patch that adds such objects costs little more than its bytes.
//
// Values keep the source spelling of everything the merge does not rebuild:
// scalars and arrays keep their exact bytes (arrays are opaque to the merge,
// as RFC 7396 requires) and object keys keep their escapes, so AppendJSON of an
// untouched value is its input with insignificant whitespace removed.
package mergepatch

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// Kind is the JSON type of a Value. The zero Kind is Null.
type Kind uint8

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is an immutable JSON value. A nil *Value is JSON null.
//
// Scalars and arrays hold their source bytes (arrays with insignificant
// whitespace removed); objects hold their members in order, or until
// first use only their compact text (lazy objects, see parser.value).
type Value struct {
	kind Kind
	raw  string                 // scalars, arrays, lazy objects: compact source text
	obj  atomic.Pointer[object] // objects; built from raw on first use
	dups *duplicates            // set on the value returned by Parse when it saw duplicates
}

// objectValue is an object Value and its members, allocated together.
type objectValue struct {
	v Value
	o object
}

func (b *objectValue) init() (*Value, *object) {
	b.v.kind = Object
	b.v.obj.Store(&b.o)
	return &b.v, &b.o
}

// newObjectValue returns an object Value and its empty members.
func newObjectValue() (*Value, *object) { return new(objectValue).init() }

// object returns the members of an object Value, building them from the
// text of a lazy object on first use (concurrent first uses may each
// build them; one result is kept).
func (v *Value) object() *object {
	if o := v.obj.Load(); o != nil {
		return o
	}
	o := buildLazy(v.raw)
	if v.obj.CompareAndSwap(nil, o) {
		return o
	}
	return v.obj.Load()
}

// Member is one name/value pair of an object.
type Member struct {
	Key   string // decoded
	Value *Value // never nil
}

// object is the body of an object Value: its slots in order (persist.go)
// and, once it has more than smallObject slots, an index from key to slot.
// A key deleted and added again has a tombstone slot and a later live one;
// the index and the backward scan of small objects find the later one.
type object struct {
	slots vec
	index *index
	live  int // slots with a value
}

const smallObject = 16

// init makes o the object of the slots ss, whose keys are not repeated;
// o keeps ss, which must have no room beyond its length (a push would
// write into it).
func (o *object) init(ss []slot) {
	o.live = len(ss)
	if len(ss) <= width {
		o.slots = vec{n: len(ss), tail: ss}
	} else {
		o.slots = vec{}.push(ss)
	}
	o.reindex()
}

func newObject(ss []slot) *object {
	o := new(object)
	o.init(slices.Clip(ss))
	return o
}

// reindex builds the index from scratch, or drops it for a small object.
func (o *object) reindex() {
	o.index = nil
	if o.slots.n > smallObject {
		o.index = newIndex(&o.slots)
	}
}

// find returns the slot position of a live member, or -1.
func (o *object) find(key string) int {
	if o.index != nil {
		if i, ok := o.index.lookup(key, &o.slots); ok && o.slots.at(i).Value != nil {
			return i
		}
		return -1
	}
	for i := o.slots.n - 1; i >= 0; i-- {
		if s := o.slots.at(i); s.Key == key {
			if s.Value == nil {
				return -1
			}
			return i
		}
	}
	return -1
}

// each calls f on the live members in order until f returns false.
func (o *object) each(f func(m Member, rawKey string) bool) bool {
	return o.slots.each(func(s *slot) bool {
		return s.Value == nil || f(s.Member, s.raw)
	})
}

// Shared immutable scalars, so that parsing null/true/false does not allocate.
var (
	nullValue  = &Value{kind: Null, raw: "null"}
	trueValue  = &Value{kind: Bool, raw: "true"}
	falseValue = &Value{kind: Bool, raw: "false"}
)

// Footprint is about how many bytes of memory v holds: its text and, for
// each object built, its slots and keys. A part shared with other values
// counts in each. It is for budgets (reconstruct's prefix memo holds
// world states), not for accounting.
func (v *Value) Footprint() int {
	if v == nil {
		return 0
	}
	n := int(unsafe.Sizeof(Value{})) + len(v.raw)
	if o := v.obj.Load(); o != nil {
		n += int(unsafe.Sizeof(object{}))
		o.slots.each(func(s *slot) bool {
			n += int(unsafe.Sizeof(slot{})) + len(s.raw) + s.Value.Footprint()
			return true
		})
	}
	return n
}

// Kind reports the JSON type of v; a nil v is Null.
func (v *Value) Kind() Kind {
	if v == nil {
		return Null
	}
	return v.kind
}

// Members returns the members of an object in order, or nil for any other
// kind, in a new slice.
func (v *Value) Members() []Member {
	if v.Kind() != Object {
		return nil
	}
	o := v.object()
	out := make([]Member, 0, o.live)
	o.each(func(m Member, _ string) bool {
		out = append(out, m)
		return true
	})
	return out
}

// Get returns the value of an object member.
func (v *Value) Get(key string) (*Value, bool) {
	if v.Kind() != Object {
		return nil, false
	}
	o := v.object()
	if i := o.find(key); i >= 0 {
		return o.slots.at(i).Value, true
	}
	return nil, false
}

// Text returns the decoded contents of a string value.
func (v *Value) Text() (string, bool) {
	if v.Kind() != String {
		return "", false
	}
	s := v.raw[1 : len(v.raw)-1]
	if strings.IndexByte(s, '\\') >= 0 {
		s = unescape(s)
	}
	return s, true
}

// Raw returns the compact JSON encoding of v in a new slice: for scalars and
// arrays the exact source bytes (arrays without insignificant whitespace).
func (v *Value) Raw() []byte {
	if k := v.Kind(); k != Null && k != Object {
		return []byte(v.raw)
	}
	return v.AppendJSON(nil)
}

// AppendJSON appends the compact encoding of v to dst. Member order and the
// source spelling of keys, scalars and arrays are preserved; nothing is
// HTML-escaped.
func (v *Value) AppendJSON(dst []byte) []byte {
	switch v.Kind() {
	case Null:
		return append(dst, "null"...)
	case Object:
		if v.raw != "" { // a lazy object: its compact text
			return append(dst, v.raw...)
		}
		dst = append(dst, '{')
		first := true
		v.object().each(func(m Member, rawKey string) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, rawKey...)
			dst = append(dst, ':')
			dst = m.Value.AppendJSON(dst)
			return true
		})
		return append(dst, '}')
	}
	return append(dst, v.raw...)
}

// MarshalJSON implements json.Marshaler. Note that encoding/json escapes
// <, > and & in the result; use AppendJSON for byte-exact output.
func (v *Value) MarshalJSON() ([]byte, error) { return v.AppendJSON(nil), nil }

// String returns the compact JSON encoding of v.
func (v *Value) String() string { return string(v.AppendJSON(nil)) }

// Equal reports whether a and b are the same JSON value: object member order
// is irrelevant, strings are compared after decoding escapes, numbers by
// exact decimal value (1, 1.0 and 1E0 are equal; 2^64 and 2^64+1 are not) and
// arrays element by element. Nil is null.
func Equal(a, b *Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case Null:
		return true
	case Bool:
		return a.raw == b.raw
	case Number:
		return a.raw == b.raw || numberEqual(a.raw, b.raw)
	case String:
		if a.raw == b.raw {
			return true
		}
		x, _ := a.Text()
		y, _ := b.Text()
		return x == y
	case Array:
		if a.raw == b.raw {
			return true
		}
		x, y := elements(a.raw), elements(b.raw)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if a == b || a.raw != "" && a.raw == b.raw {
		return true
	}
	if a.object().live != b.object().live {
		return false
	}
	return a.object().each(func(m Member, _ string) bool {
		w, ok := b.Get(m.Key)
		return ok && Equal(m.Value, w)
	})
}

// elements parses the elements of a validated array.
func elements(raw string) []*Value {
	p := parser{s: raw, i: 1}
	var out []*Value
	for p.skipWS(); p.i < len(p.s) && p.s[p.i] != ']'; p.skipWS() {
		v, err := p.value(1)
		if err != nil {
			return out // unreachable: raw was validated when v was built
		}
		out = append(out, v)
		if p.skipWS(); p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
	return out
}

// numberEqual compares two valid JSON number literals by exact value.
func numberEqual(a, b string) bool {
	if plainInteger(a) && plainInteger(b) {
		// JSON integers have no leading zeros: one spelling per value,
		// but for zero's sign.
		return a == b || strings.TrimPrefix(a, "-") == "0" && strings.TrimPrefix(b, "-") == "0"
	}
	an, ad, ae := decimal(a)
	bn, bd, be := decimal(b)
	if ad == "" || bd == "" {
		return ad == bd // zero, whatever its sign and exponent
	}
	return an == bn && ad == bd && ae.Cmp(be) == 0
}

// plainInteger reports whether a valid JSON number has no fraction and
// no exponent.
func plainInteger(s string) bool { return !strings.ContainsAny(s, ".eE") }

// decimal splits a JSON number into sign, significant digits without leading
// or trailing zeros ("" for zero) and the exponent of the last digit.
func decimal(s string) (neg bool, digits string, exp *big.Int) {
	neg = strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	exp = new(big.Int)
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		exp.SetString(strings.TrimPrefix(s[i+1:], "+"), 10)
	}
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		exp.Sub(exp, big.NewInt(int64(len(mant)-i-1)))
		mant = mant[:i] + mant[i+1:]
	}
	mant = strings.TrimLeft(mant, "0")
	trimmed := strings.TrimRight(mant, "0")
	exp.Add(exp, big.NewInt(int64(len(mant)-len(trimmed))))
	return neg, trimmed, exp
}

// appendPointer appends the RFC 6901 encoding of one reference token.
func appendPointer(dst []byte, token string) []byte {
	dst = append(dst, '/')
	for i := 0; i < len(token); i++ {
		switch c := token[i]; c {
		case '~':
			dst = append(dst, "~0"...)
		case '/':
			dst = append(dst, "~1"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// unescape decodes the body of a valid JSON string that contains escapes.
// Unpaired surrogates become U+FFFD, as in encoding/json.
func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := strings.IndexByte(s[i:], '\\')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		switch c = s[i+1]; c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := rune(hex4(s[i+2:]))
			i += 6
			if r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(s[i:], `\u`) {
				if lo := rune(hex4(s[i+2:])); lo >= 0xDC00 && lo < 0xE000 {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					i += 6
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			continue
		default: // '"', '\\', '/'
			b.WriteByte(c)
		}
		i += 2
	}
	return b.String()
}

func hex4(s string) int {
	n := 0
	for i := 0; i < 4; i++ {
		n = n<<4 | hexVal(s[i])
	}
	return n
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// compact removes insignificant whitespace from valid JSON text.
func compact(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\':
			b.WriteByte(c)
			i++
			c = s[i]
		case in && c == '"':
			in = false
		case in:
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '"':
			in = true
		}
		b.WriteByte(c)
	}
	return b.String()
}

// AppendJSONPrefix appends the compact encoding of v as AppendJSON does,
// but stops once it has appended more than limit bytes (the key in
// hand and the closing braces may pass it): a page that shows a large state pays for what it
// shows, not for the whole state. whole reports whether all of v was
// appended.
func (v *Value) AppendJSONPrefix(dst []byte, limit int) (out []byte, whole bool) {
	end := len(dst) + limit
	dst, whole = v.appendPrefix(dst, end)
	return dst, whole
}

func (v *Value) appendPrefix(dst []byte, end int) ([]byte, bool) {
	if k := v.Kind(); k != Object || v.raw != "" { // a scalar, an array, a lazy object: its text, cut
		text := v.raw
		if k == Null {
			text = "null"
		}
		if n := end - len(dst); n < len(text) {
			return append(dst, text[:max(n, 0)]...), false
		}
		return append(dst, text...), true
	}
	dst = append(dst, '{')
	first, whole := true, true
	v.object().each(func(m Member, rawKey string) bool {
		if len(dst) > end {
			whole = false
			return false
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(append(dst, rawKey...), ':')
		dst, whole = m.Value.appendPrefix(dst, end)
		return whole
	})
	if !whole {
		return dst, false
	}
	return append(dst, '}'), true
}
