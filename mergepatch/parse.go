package mergepatch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects Parse accepts.
const MaxDepth = 10000

// SyntaxError reports input that Parse rejects.
type SyntaxError struct {
	Offset int // byte offset of the problem in the input
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Duplicate is a repeated object key seen by Parse.
type Duplicate struct {
	Path   string // RFC 6901 pointer to the object holding the key ("" is the root)
	Key    string // decoded key
	Offset int    // byte offset of the repeated key in the input
}

// duplicates is what Parse saw of repeated keys.
type duplicates struct {
	list      []Duplicate
	count     int // including those not in list
	pathBytes int // total length of the paths in list
}

// maxDuplicatePathBytes bounds the memory Duplicates may hold: a document
// can repeat a key at every level of a deep nesting, and the paths would
// grow with the square of its size.
const maxDuplicatePathBytes = 1 << 20

// Duplicates returns the repeated keys seen by the Parse call that built v,
// anywhere in the document including inside arrays, one entry per repeat in
// input order. If the paths would exceed 1 MiB in total, the list stops
// there and DuplicateCount tells how many there were. Only the value Parse
// returned reports duplicates (so does Apply's result when it is that value).
func (v *Value) Duplicates() []Duplicate {
	if v == nil || v.dups == nil {
		return nil
	}
	return v.dups.list
}

// DuplicateCount returns the number of repeated keys seen by the Parse call
// that built v, which may exceed len(v.Duplicates()).
func (v *Value) DuplicateCount() int {
	if v == nil || v.dups == nil {
		return 0
	}
	return v.dups.count
}

// Parse parses one strict JSON value (RFC 8259) with optional surrounding
// whitespace. Strings must be valid UTF-8; nesting deeper than MaxDepth is an
// error. A repeated object key is reported by Duplicates; the object keeps
// the key at its first position with the value of its last occurrence (the
// value encoding/json would see). Inside arrays, which are opaque, the
// repeats stay in the bytes.
//
// The result does not alias data but holds one copy of it, which stays in
// memory while any key, scalar or array parsed from it is reachable,
// including through results of Apply.
func Parse(data []byte) (*Value, error) { return parse(string(data)) }

// ParseString is Parse for a string, such as gjson's Result.Raw, saving
// the []byte conversion. It copies s, so the result never keeps a larger
// string that s is part of alive.
func ParseString(s string) (*Value, error) { return parse(strings.Clone(s)) }

func parse(s string) (*Value, error) {
	sc := scratches.Get().(*scratch)
	p := parser{s: s, path: sc.path, keys: sc.keys, ss: sc.ss}
	// First slab sizes from the length: about what a small patch needs,
	// so that one allocation of each kind serves most parses.
	p.sizeSlabs()
	defer sc.recycle(&p)
	p.skipWS()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.skipWS(); p.i < len(p.s) {
		return nil, p.errorf("unexpected %s after top-level value", p.what())
	}
	if p.dups.count > 0 {
		d := p.dups // a copy, so v does not keep p alive
		v.dups = &d // v is an object or array, so not a shared scalar
	}
	return v, nil
}

// scratch is a parser's working memory (the path, the members of the
// objects being built), recycled across parses: a replay parses one small
// patch per world_state line, and growing these from nothing each time
// was a fifth of the parse.
type scratch struct {
	path []segment
	keys []string
	ss   []slot
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// scratchKeep bounds what a scratch keeps between parses: clearing it
// costs in proportion, and a huge document is rare.
const scratchKeep = 256

func (sc *scratch) recycle(p *parser) {
	if cap(p.path) > scratchKeep || cap(p.keys) > scratchKeep || cap(p.ss) > scratchKeep {
		return
	}
	// Clear what the parse used, so the pool keeps no document alive.
	sc.path, sc.keys, sc.ss = clearAll(p.path), clearAll(p.keys), clearAll(p.ss)
	scratches.Put(sc)
}

func clearAll[T any](s []T) []T {
	s = s[:cap(s)]
	clear(s)
	return s[:0]
}

type parser struct {
	s        string
	i        int
	ws       bool // whitespace skipped since last reset
	dups     duplicates
	path     []segment // position of the value being parsed, for dups
	obj      int       // offset of the innermost object being parsed
	lastObj  int       // p.obj of the last duplicate
	lastPath string    // and its path
	keys     []string  // keys of the objects being skipped, innermost last
	eager    bool      // build every object: a lazy one would not do (lazy)
	nulls    bool      // skip saw a null member outside arrays
	inArray  int       // arrays skip is inside
	ss       []slot    // members of the objects being built, innermost last
	values   slab[Value]
	slots    slab[slot]
	objects  slab[objectValue]
}

// slab hands out the parts of a parse's result from a few large
// allocations instead of one each. They live as long as any part does,
// which is the parse's input too.
type slab[T any] struct {
	free []T
	size int // of the next allocation
}

const slabMax = 256

// sizeSlabs sets the first slab sizes from the length of the input: about
// what a small world-state patch needs (one of each serves most), and
// what a bigger document needs early on.
func (p *parser) sizeSlabs() {
	n := len(p.s)
	p.values.size = min(max(n/32, 2), slabMax)
	p.slots.size = min(max(n/24, 2), slabMax)
	p.objects.size = min(max(n/64, 1), slabMax)
}

// take returns n zero Ts, with no room beyond them.
func (s *slab[T]) take(n int) []T {
	if len(s.free) < n {
		s.free = make([]T, max(n, s.size))
		s.size = min(2*s.size, slabMax)
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}

// segment is an object key or, when idx >= 0, an array index.
type segment struct {
	key string
	idx int
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

// what describes the byte at p.i for error messages.
func (p *parser) what() string {
	if p.i >= len(p.s) {
		return "end of input"
	}
	if c := p.s[p.i]; c >= utf8.RuneSelf {
		return fmt.Sprintf("byte %#02x", c)
	}
	return strconv.QuoteRune(rune(p.s[p.i]))
}

func (p *parser) skipWS() {
	i := p.i
	for i < len(p.s) {
		switch p.s[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		break
	}
	if i > p.i {
		p.ws = true
		p.i = i
	}
}

// value parses the value at p.i; depth is that of the enclosing container.
func (p *parser) value(depth int) (*Value, error) {
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end of input, expecting a value")
	}
	start := p.i
	switch p.s[p.i] {
	case '{':
		if depth >= eagerDepth && !p.eager {
			return p.lazy(depth)
		}
		return p.object(depth + 1)
	case '[':
		p.ws = false
		if err := p.skip(depth); err != nil {
			return nil, err
		}
		raw := p.s[start:p.i]
		if p.ws {
			raw = compact(raw)
		}
		v := p.alloc()
		v.kind, v.raw = Array, raw
		return v, nil
	case '"':
		if _, err := p.str(); err != nil {
			return nil, err
		}
		v := p.alloc()
		v.kind, v.raw = String, p.s[start:p.i]
		return v, nil
	case 't':
		return trueValue, p.literal("true")
	case 'f':
		return falseValue, p.literal("false")
	case 'n':
		return nullValue, p.literal("null")
	}
	if err := p.number(); err != nil {
		return nil, err
	}
	v := p.alloc()
	v.kind, v.raw = Number, p.s[start:p.i]
	return v, nil
}

func (p *parser) object(depth int) (*Value, error) {
	if depth > MaxDepth {
		return nil, p.errorf("nesting deeper than %d", MaxDepth)
	}
	// Members collect on p.ss above base (nested objects use and release
	// the space above that), then move to a slice of the slots slab.
	base := len(p.ss)
	var keys *index // past smallObject members: positions by key hash
	err := p.members(func(key, rawKey string, off int) error {
		var i int
		if keys != nil {
			i = keys.lookupIn(key, p.ss[base:])
		} else {
			i = slices.IndexFunc(p.ss[base:], func(s slot) bool { return s.Key == key })
		}
		ok := i >= 0
		if ok {
			p.duplicate(key, off)
		}
		v, err := p.value(depth)
		switch {
		case err != nil:
			return err
		case ok:
			p.ss[base+i].Value = v
			return nil
		}
		p.ss = append(p.ss, slot{Member: Member{Key: key, Value: v}, raw: rawKey})
		if n := len(p.ss) - base; keys != nil {
			keys.record(hashKey(key), int32(n-1))
		} else if n > smallObject {
			keys = &index{tab: make([]entry, tableSize(2*n))}
			for i, s := range p.ss[base:] {
				keys.record(hashKey(s.Key), int32(i))
			}
		}
		return nil
	})
	v, o := p.objects.take(1)[0].init()
	if err == nil {
		ss := p.slots.take(len(p.ss) - base)
		copy(ss, p.ss[base:])
		o.init(ss)
	}
	p.ss = p.ss[:base]
	return v, err
}

// eagerDepth is how many levels of objects a parse builds; deeper ones are
// lazy. Merges reach the first levels (a world-state patch changes a
// section's entries); what lies below is mostly added or replaced whole.
const eagerDepth = 2

// lazy validates the object at p.i and returns it as its compact text,
// which Value.object builds on first use; depth is that of the enclosing
// container. An object with a null member or a repeated key is built now
// (the merge drops nulls of added members, and the text of a repeat is
// not the value's), so a lazy object is exactly its text.
func (p *parser) lazy(depth int) (*Value, error) {
	start, dups, lastObj, lastPath := p.i, p.dups, p.lastObj, p.lastPath
	p.ws, p.nulls = false, false
	if err := p.skip(depth); err != nil {
		return nil, err
	}
	if p.nulls || p.dups.count > dups.count {
		p.i, p.dups, p.lastObj, p.lastPath = start, dups, lastObj, lastPath
		p.eager = true
		v, err := p.object(depth + 1)
		p.eager = false
		return v, err
	}
	raw := p.s[start:p.i]
	if p.ws {
		raw = compact(raw)
	}
	v := p.alloc()
	v.kind, v.raw = Object, raw
	return v, nil
}

// buildLazy builds the members of a lazy object from its text.
func buildLazy(raw string) *object {
	sc := scratches.Get().(*scratch)
	p := parser{s: raw, path: sc.path, keys: sc.keys, ss: sc.ss}
	p.sizeSlabs()
	defer sc.recycle(&p)
	v, err := p.object(1)
	if err != nil {
		return new(object) // unreachable: raw was validated when it was parsed
	}
	return v.obj.Load()
}

func (p *parser) alloc() *Value { return &p.values.take(1)[0] }

// skip validates the value at p.i without building it, recording
// duplicate keys; depth is that of the enclosing container.
func (p *parser) skip(depth int) error {
	if p.i >= len(p.s) {
		return p.errorf("unexpected end of input, expecting a value")
	}
	switch p.s[p.i] {
	case '{':
		if depth++; depth > MaxDepth {
			return p.errorf("nesting deeper than %d", MaxDepth)
		}
		mark := len(p.keys)
		var seen map[string]bool // replaces the linear scan of p.keys[mark:] for big objects
		err := p.members(func(key, _ string, off int) error {
			switch {
			case seen != nil:
				if seen[key] {
					p.duplicate(key, off)
				}
				seen[key] = true
			case contains(p.keys[mark:], key):
				p.duplicate(key, off)
			case len(p.keys)-mark < smallObject:
				p.keys = append(p.keys, key)
			default:
				seen = make(map[string]bool, 2*smallObject)
				for _, k := range p.keys[mark:] {
					seen[k] = true
				}
				seen[key] = true
			}
			if p.inArray == 0 && p.i < len(p.s) && p.s[p.i] == 'n' {
				p.nulls = true
			}
			return p.skip(depth)
		})
		p.keys = p.keys[:mark]
		return err
	case '[':
		if depth++; depth > MaxDepth {
			return p.errorf("nesting deeper than %d", MaxDepth)
		}
		p.i++
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return nil
		}
		p.inArray++
		defer func() { p.inArray-- }()
		for n := 0; ; n++ {
			p.path = append(p.path, segment{idx: n})
			err := p.skip(depth)
			p.path = p.path[:len(p.path)-1]
			if err != nil {
				return err
			}
			p.skipWS()
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return nil
			}
			if p.i >= len(p.s) || p.s[p.i] != ',' {
				return p.errorf("unexpected %s in array, expecting ',' or ']'", p.what())
			}
			p.i++
			p.skipWS()
		}
	case '"':
		_, err := p.str()
		return err
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	}
	return p.number()
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// members parses the members of the object at p.i, calling f with p.i at
// each member's value, which f must consume.
func (p *parser) members(f func(key, rawKey string, off int) error) error {
	outer := p.obj
	p.obj = p.i
	err := p.memberList(f)
	p.obj = outer
	return err
}

func (p *parser) memberList(f func(key, rawKey string, off int) error) error {
	p.i++ // '{'
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return p.errorf("unexpected %s in object, expecting a string key", p.what())
		}
		off := p.i
		key, err := p.str()
		if err != nil {
			return err
		}
		rawKey := p.s[off:p.i]
		if p.skipWS(); p.i >= len(p.s) || p.s[p.i] != ':' {
			return p.errorf("unexpected %s after object key, expecting ':'", p.what())
		}
		p.i++
		p.skipWS()
		p.path = append(p.path, segment{key: key, idx: -1})
		err = f(key, rawKey, off)
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return err
		}
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return nil
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return p.errorf("unexpected %s in object, expecting ',' or '}'", p.what())
		}
		p.i++
		p.skipWS()
	}
}

// duplicate records a repeated key; it is called while parsing the key's
// value, so the last path segment is the key itself.
func (p *parser) duplicate(key string, off int) {
	d := &p.dups
	if d.count++; d.pathBytes > maxDuplicatePathBytes {
		return
	}
	if d.list == nil || p.lastObj != p.obj {
		var path []byte
		for _, s := range p.path[:len(p.path)-1] {
			if s.idx >= 0 {
				path = strconv.AppendInt(append(path, '/'), int64(s.idx), 10)
			} else {
				path = appendPointer(path, s.key)
			}
		}
		p.lastObj, p.lastPath = p.obj, string(path)
		d.pathBytes += len(path)
	}
	d.list = append(d.list, Duplicate{Path: p.lastPath, Key: key, Offset: off})
}

// str scans the string at p.i and returns its decoded contents.
func (p *parser) str() (string, error) {
	s := p.s
	start := p.i + 1
	escaped := false
	for i := start; i < len(s); {
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		switch c := s[i]; {
		case c == '"':
			p.i = i + 1
			if escaped {
				return unescape(s[start:i]), nil
			}
			return s[start:i], nil
		case c == '\\':
			escaped = true
			n := 2
			if i+1 < len(s) && s[i+1] == 'u' {
				n = 6
				if i+6 > len(s) || hexVal(s[i+2])|hexVal(s[i+3])|hexVal(s[i+4])|hexVal(s[i+5]) < 0 {
					p.i = i
					return "", p.errorf(`invalid \u escape in string`)
				}
			} else if i+1 >= len(s) || !strings.Contains(`"\/bfnrt`, s[i+1:i+2]) {
				p.i = i
				return "", p.errorf("invalid escape in string")
			}
			i += n
		case c < 0x20:
			p.i = i
			return "", p.errorf("control character %#02x in string", c)
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				p.i = i
				return "", p.errorf("invalid UTF-8 in string")
			}
			i += n
		}
	}
	p.i = len(s)
	return "", p.errorf("unterminated string")
}

// plainASCII marks the bytes a string holds as they are: printable ASCII
// but the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (p *parser) literal(lit string) error {
	if !strings.HasPrefix(p.s[p.i:], lit) {
		return p.errorf("invalid literal, expecting %q", lit)
	}
	p.i += len(lit)
	return nil
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at p.i.
func (p *parser) number() error {
	s, i := p.s, p.i
	digits := func() bool {
		j := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		p.i = i
		return p.errorf("unexpected %s, expecting a value", p.what())
	}
	if i < len(s) && s[i] == '.' {
		if i++; !digits() {
			p.i = i
			return p.errorf("expecting a digit after the decimal point")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if i++; i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			p.i = i
			return p.errorf("expecting a digit in the exponent")
		}
	}
	p.i = i
	return nil
}
