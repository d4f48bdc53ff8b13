package rollout

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Splices: how Rewrite changes the bytes of one object. Every edit is
// located in the original bytes by the scanner (Members, Elements), turned
// into a splice, and the splices of an object are applied in one pass, so
// no byte outside them moves.

// splice replaces raw[at:at+del] with ins.
type splice struct {
	at, del int
	ins     []byte
	member  int // start of the object whose member it changes, with key
	key     string
	change  Change
}

// splicedLen is the length of raw with the splices applied.
func splicedLen(raw []byte, sps []splice) int {
	n := len(raw)
	for _, s := range sps {
		n += len(s.ins) - s.del
	}
	return n
}

// appendSplices appends raw with the splices applied to dst.
func appendSplices(dst, raw []byte, sps []splice) []byte {
	slices.SortStableFunc(sps, func(a, b splice) int { return cmp.Compare(a.at, b.at) })
	prev := 0
	for _, s := range sps {
		dst = append(dst, raw[prev:s.at]...)
		dst = append(dst, s.ins...)
		prev = s.at + s.del
	}
	return append(dst, raw[prev:]...)
}

// editObject applies the member edits and the sequence to object k of a
// line and returns its span with the edits applied: the span itself when
// nothing changes, else a piece of w.spliced (valid until the next line).
func (w *rewriter) editObject(l *line, k int, sp span, applied []bool, outLine int) ([]byte, error) {
	rec := &l.rec
	raw := rec.Raw[sp.start:sp.end]
	base := sp.objS - sp.start // the object's start inside raw
	obj := raw[base : sp.objE-sp.start]
	sps := w.sps[:0]
	defer func() { w.sps = sps[:0] }()
	add := func(s splice) {
		for _, o := range sps {
			if o.member == s.member && o.key == s.key {
				return // a second edit of one member: the first wins
			}
		}
		sps = append(sps, s)
	}
	// Member edits first, then fills, so a fill never takes an element an
	// edit of its own already changes.
	for pass := 0; pass < 2; pass++ {
		for i, e := range l.edits {
			switch {
			case pass == 0 && (e.Kind == EditSet || e.Kind == EditSplice):
			case pass == 1 && e.Kind == EditFill:
			default:
				continue
			}
			if e.Match != nil && !e.Match(obj) {
				continue
			}
			var err error
			switch e.Kind {
			case EditSet, EditSplice:
				var s *splice
				if e.Kind == EditSet {
					s, err = w.setSplice(obj, e, rec.Line, k)
				} else {
					s, err = rawSplice(obj, e)
				}
				if s != nil {
					applied[i] = true
					add(*s)
				}
			case EditFill:
				taken := map[int]bool{}
				for _, s := range sps {
					taken[s.member] = true
				}
				for _, s := range w.fillSplices(obj, e, taken) {
					add(s)
				}
			}
			if err != nil {
				var se skipError
				switch {
				case errors.As(err, &se):
					w.skip(e, rec.Line, se.reason)
				case errors.Is(err, ErrSkipEdit):
					w.skip(e, rec.Line, strings.TrimPrefix(err.Error(), ErrSkipEdit.Error()+": "))
				default:
					return nil, fmt.Errorf("line %d: %s: %w", rec.Line, e.Label, err)
				}
				applied[i] = true // reported here, not again as unmatched
			}
		}
	}
	if w.plan.Sequence != nil {
		s, err := w.sequenceSplice(obj, rec.Line, func(reason string) {
			w.skip(Edit{Label: w.seqLabel(rec.Line)}, rec.Line, reason)
		})
		if err != nil {
			return nil, err
		}
		if s != nil {
			add(*s)
		}
	}
	if len(sps) == 0 {
		return raw, nil
	}
	for i := range sps {
		sps[i].at += base
		c := sps[i].change
		c.Line, c.Offset, c.Part, c.OutLine = rec.Line, rec.Offset, k, outLine
		w.change(c)
	}
	// Appended after the line's earlier objects: a piece returned before
	// keeps its bytes even when the buffer grows (it keeps the old array).
	start := len(w.spliced)
	if n := start + splicedLen(raw, sps); n > 1<<20 && cap(w.spliced) < n {
		// A long line: one buffer of its size, not append's growth.
		w.spliced = append(longBuffer(n), w.spliced...)
	}
	w.spliced = appendSplices(w.spliced, raw, sps)
	edited := w.spliced[start:len(w.spliced):len(w.spliced)]
	if !validObject(edited[base : len(edited)-(len(raw)-(sp.objE-sp.start))]) {
		return nil, fmt.Errorf("line %d: the edited object is not valid JSON (a bug in repair)", rec.Line)
	}
	return edited, nil
}

type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

func (w *rewriter) seqLabel(line int) string {
	if s := w.plan.Sequence; s != nil && s.Label != nil {
		return s.Label(line)
	}
	return ""
}

// sequenceSplice numbers one object.
func (w *rewriter) sequenceSplice(obj []byte, line int, skip func(string)) (*splice, error) {
	seq := w.plan.Sequence
	n := w.seq
	w.seq++
	if line < seq.From {
		// Kept as it is; numbering goes on from its value.
		Members(obj, func(key []byte, s, e int) bool {
			if string(key) == seq.Key {
				if v, err := strconv.ParseInt(string(obj[s:e]), 10, 64); err == nil && v >= 0 {
					w.seq = v + 1
				}
				return false
			}
			return true
		})
		return nil, nil
	}
	open := skipSpace(obj, 0)
	var cur [][2]int
	after := -1
	Members(obj, func(key []byte, s, e int) bool {
		switch string(key) {
		case seq.Key:
			cur = append(cur, [2]int{s, e})
		case seq.After:
			if after < 0 {
				after = e
			}
		}
		return true
	})
	want := strconv.AppendInt(nil, n, 10)
	ch := Change{Label: w.seqLabel(line), Action: ActionSet, Path: seq.Key, After: want}
	switch len(cur) {
	case 0:
		ins := append([]byte(`"`+seq.Key+`":`), want...)
		s := splice{member: open, key: seq.Key, change: ch}
		if after >= 0 {
			s.at, s.ins = after, append([]byte(","), ins...)
		} else {
			s.at, s.ins = open+1, withComma(obj, open, ins)
		}
		return &s, nil
	case 1:
		old := obj[cur[0][0]:cur[0][1]]
		if bytes.Equal(old, want) {
			return nil, nil
		}
		ch.Before = old
		return &splice{at: cur[0][0], del: cur[0][1] - cur[0][0], ins: want, member: open, key: seq.Key, change: ch}, nil
	default:
		if skip != nil {
			skip(fmt.Sprintf("the object has %d %q members", len(cur), seq.Key))
		}
		return nil, nil
	}
}

// withComma makes ins a first member: followed by a comma unless the
// object is empty.
func withComma(obj []byte, open int, ins []byte) []byte {
	if j := skipSpace(obj, open+1); j < len(obj) && obj[j] == '}' {
		return ins
	}
	return append(ins, ',')
}

// resolve finds the object or array at path inside obj: its [start,end).
func resolve(obj []byte, path []string) (int, int, error) {
	s, e := skipSpace(obj, 0), len(obj)
	for e > s && isSpace(obj[e-1]) {
		e--
	}
	for i, step := range path {
		if s >= e {
			return 0, 0, skipError{"no " + pathString(path[:i+1]) + " to edit"}
		}
		v := obj[s:e]
		found := 0
		var ns, ne int
		switch v[0] {
		case '{':
			Members(v, func(key []byte, a, b int) bool {
				if string(key) == step {
					found++
					if found == 1 {
						ns, ne = s+a, s+b
					}
				}
				return true
			})
			if found > 1 {
				return 0, 0, skipError{fmt.Sprintf("%s has %d %q members", pathString(path[:i]), found, step)}
			}
		case '[':
			idx, err := strconv.Atoi(step)
			if err != nil || idx < 0 {
				return 0, 0, skipError{fmt.Sprintf("%s is an array, not an object", pathString(path[:i]))}
			}
			j := 0
			Elements(v, func(a, b int) bool {
				if j == idx {
					found, ns, ne = 1, s+a, s+b
					return false
				}
				j++
				return true
			})
		}
		if found == 0 {
			return 0, 0, skipError{"no " + pathString(path[:i+1]) + " to edit"}
		}
		s, e = ns, ne
	}
	return s, e, nil
}

// pathString renders a path for messages and changes: payload.items[3].id.
func pathString(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// memberPath is pathString of path and key, made once per distinct path:
// a plan of many edits of one member names it once.
func (w *rewriter) memberPath(path []string, key string) string {
	b := w.pathBuf[:0]
	for _, p := range path {
		b = append(append(b, p...), 0)
	}
	b = append(b, key...)
	w.pathBuf = b
	if s, ok := w.paths[string(b)]; ok {
		return s
	}
	s := pathString(append(append([]string{}, path...), key))
	if w.paths == nil {
		w.paths = map[string]string{}
	}
	w.paths[string(b)] = s
	return s
}

// memberRanges lists the value ranges of member key in the object at
// obj[s:e], as offsets into obj.
func memberRanges(obj []byte, s, e int, key string) [][2]int {
	var out [][2]int
	Members(obj[s:e], func(k []byte, a, b int) bool {
		if string(k) == key {
			out = append(out, [2]int{s + a, s + b})
		}
		return true
	})
	return out
}

func (w *rewriter) memKey(b []byte) memKey {
	return memKey{maphash.Bytes(w.opts.RememberSeed, b), len(b)}
}

func (w *rewriter) recall(target []byte) ([]byte, bool) {
	k := w.memKey(target)
	vals := w.memory[k]
	if w.used == nil {
		w.used = map[memKey]int{}
	}
	i := w.used[k]
	if i >= len(vals) {
		return nil, false
	}
	w.used[k] = i + 1
	return vals[i], true
}

func (w *rewriter) setSplice(obj []byte, e Edit, line, part int) (*splice, error) {
	s, end, err := resolve(obj, e.Path)
	if err != nil {
		return nil, err
	}
	if obj[s] != '{' {
		return nil, skipError{pathString(e.Path) + " is not an object"}
	}
	target := obj[s:end]
	cur := memberRanges(obj, s, end, e.Key)
	if len(cur) > 1 {
		return nil, skipError{fmt.Sprintf("the object has %d %q members", len(cur), e.Key)}
	}
	var old []byte
	if len(cur) == 1 {
		old = obj[cur[0][0]:cur[0][1]]
	}
	if e.When != nil && !e.When(old, len(cur) == 1) {
		return nil, nil
	}
	var val []byte
	recalled := false
	if e.Recall {
		val, recalled = w.recall(target)
	}
	if !recalled {
		if e.Value == nil {
			return nil, errors.New("no value")
		}
		w.ctx = EditContext{Line: line, Part: part, Object: obj, Target: target}
		val, err = e.Value(&w.ctx)
		if err != nil {
			return nil, err
		}
	}
	if e.Remember && w.recalls {
		k := w.memKey(target)
		w.memory[k] = append(w.memory[k], bytes.Clone(val))
	}
	path := w.memberPath(e.Path, e.Key)
	ch := Change{Label: e.Label, Action: ActionSet, Path: path, Before: old, After: val}
	if len(cur) == 1 {
		return &splice{at: cur[0][0], del: cur[0][1] - cur[0][0], ins: val, member: s, key: e.Key, change: ch}, nil
	}
	// One allocation, room for the comma: no string concatenation per edit.
	ins := make([]byte, 0, len(e.Key)+len(val)+4)
	ins = append(append(append(append(ins, '"'), e.Key...), '"', ':'), val...)
	return &splice{at: s + 1, ins: withComma(obj, s, ins), member: s, key: e.Key, change: ch}, nil
}

// fillSplices gives remembered values to the elements of an array that
// lack the key.
func (w *rewriter) fillSplices(obj []byte, e Edit, taken map[int]bool) []splice {
	s, end, err := resolve(obj, e.Path)
	if err != nil || obj[s] != '[' {
		return nil // nothing to fill
	}
	var out []splice
	i := 0
	Elements(obj[s:end], func(a, b int) bool {
		es, ee := s+a, s+b
		idx := i
		i++
		if obj[es] != '{' || taken[es] {
			return true
		}
		cur := memberRanges(obj, es, ee, e.Key)
		if len(cur) > 1 {
			return true
		}
		// A copy of an item that was given a new id gets the same id,
		// whatever it holds now.
		val, ok := w.recall(obj[es:ee])
		if !ok || (len(cur) == 1 && bytes.Equal(obj[cur[0][0]:cur[0][1]], val)) {
			return true
		}
		path := pathString(append(append([]string{}, e.Path...), strconv.Itoa(idx), e.Key))
		ch := Change{Label: e.Label, Action: ActionSet, Path: path, After: val}
		if len(cur) == 1 {
			ch.Before = obj[cur[0][0]:cur[0][1]]
			out = append(out, splice{at: cur[0][0], del: cur[0][1] - cur[0][0], ins: val, member: es, key: e.Key, change: ch})
		} else {
			ins := append([]byte(`"`+e.Key+`":`), val...)
			out = append(out, splice{at: es + 1, ins: withComma(obj, es, ins), member: es, key: e.Key, change: ch})
		}
		return true
	})
	return out
}

// rawSplice is an EditSplice: the range and bytes come from the edit.
func rawSplice(obj []byte, e Edit) (*splice, error) {
	start, end, repl, err := e.Splice(obj)
	if err != nil {
		return nil, err
	}
	if start < 0 || end < start || end > len(obj) {
		return nil, fmt.Errorf("splice [%d,%d) outside the object", start, end)
	}
	ch := Change{Label: e.Label, Action: ActionEdit, Path: e.Key, Before: obj[start:end], After: repl}
	return &splice{at: start, del: end - start, ins: repl, member: -1, key: e.Label, change: ch}, nil
}

func validUTF8(b []byte) bool { return utf8.Valid(b) }

func appendBase64(dst, b []byte) []byte { return base64.StdEncoding.AppendEncode(dst, b) }
