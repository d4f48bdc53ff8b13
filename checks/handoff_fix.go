package checks

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

// Handoff fixes (handoffs.md): each edits one member of the handoff's latest
// record line and keeps every other byte of the line. Planning is pure: it
// reads the raw line and returns the byte range to replace.

// handoffAction decides one handoff fix on the members of the record's
// payload: the byte range of the record to replace, and with what.
type handoffAction func(p hofPayload) (start, end int, repl []byte, err error)

// planHandoffEdit plans action on the record of handoff id among the
// objects of raw (the bytes of its latest line, or of one object of it): the
// last context_handoff record with that id.
func planHandoffEdit(raw []byte, id string, action handoffAction) (start, end int, repl []byte, err error) {
	base, obj, err := handoffObject(raw, id)
	if err != nil {
		return 0, 0, nil, err
	}
	pm, err := readPayload(obj)
	if err != nil {
		return 0, 0, nil, err
	}
	start, end, repl, err = action(pm)
	if err != nil {
		return 0, 0, nil, err
	}
	return base + start, base + end, repl, nil
}

// handoffObject finds, among the objects of a line (one, or several when
// concatenated), the last context_handoff record with the id; it returns
// its offset in the line and its bytes.
func handoffObject(raw []byte, id string) (int, []byte, error) {
	found := -1
	var obj []byte
	for i := hofSkipWS(raw, 0); i < len(raw); i = hofSkipWS(raw, i) {
		if raw[i] != '{' {
			return 0, nil, errors.New("the line is not a sequence of JSON objects")
		}
		end := rollout.ValueEnd(raw, i)
		if end < 0 {
			return 0, nil, errors.New("the line holds an unterminated object")
		}
		o := raw[i:end]
		if gjson.GetBytes(o, "type").String() == rollout.TypeContextHandoff && gjson.GetBytes(o, "payload.id").String() == id {
			found, obj = i, o
		}
		i = end
	}
	if found < 0 {
		return 0, nil, errors.New("the line holds no context_handoff record with that id (was the file changed?)")
	}
	return found, obj, nil
}

func hofSkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// hofMember is one member of the payload object: byte offsets in the record.
type hofMember struct {
	key          string
	keyStart     int // the key's opening quote
	valStart     int
	valEnd       int
	raw          string // the value
	prevEnd      int    // end of the previous member's value; -1 for the first
	nextKeyStart int    // the next member's key; -1 for the last
}

// hofPayload are the members of a record's payload, in order.
type hofPayload struct {
	open, close int // offsets of the payload's braces
	members     []hofMember
}

func (p hofPayload) find(key string) (hofMember, int, error) {
	var m hofMember
	n := 0
	for _, x := range p.members {
		if x.key == key {
			if n == 0 {
				m = x
			}
			n++
		}
	}
	if n > 1 {
		return hofMember{}, n, fmt.Errorf("the payload has %d %q members: readers disagree on which wins; fix it by hand", n, key)
	}
	return m, n, nil
}

// readPayload walks the payload's members with gjson, keeping their byte
// offsets in the record.
func readPayload(obj []byte) (hofPayload, error) {
	pl := gjson.GetBytes(obj, "payload")
	if !pl.IsObject() {
		return hofPayload{}, errors.New("the record has no payload object")
	}
	if pl.Index <= 0 || pl.Index+len(pl.Raw) > len(obj) || string(obj[pl.Index:pl.Index+len(pl.Raw)]) != pl.Raw {
		return hofPayload{}, errors.New("cannot locate the payload's bytes")
	}
	p := hofPayload{open: pl.Index, close: pl.Index + len(pl.Raw) - 1}
	pl.ForEach(func(k, v gjson.Result) bool {
		m := hofMember{key: k.Str, keyStart: k.Index, valStart: v.Index, valEnd: v.Index + len(v.Raw), raw: v.Raw,
			prevEnd: -1, nextKeyStart: -1}
		if n := len(p.members); n > 0 {
			m.prevEnd = p.members[n-1].valEnd
			p.members[n-1].nextKeyStart = m.keyStart
		}
		p.members = append(p.members, m)
		return true
	})
	for _, m := range p.members {
		if string(obj[m.valStart:m.valEnd]) != m.raw || obj[m.keyStart] != '"' {
			return hofPayload{}, errors.New("cannot locate the payload's members")
		}
	}
	return p, nil
}

// setDeferredTrue sets "deferred":true: the value is replaced when the
// member exists, else the member is inserted right after "status" (at the
// end of the payload when there is no status).
func setDeferredTrue(p hofPayload) (int, int, []byte, error) {
	d, n, err := p.find("deferred")
	if err != nil {
		return 0, 0, nil, err
	}
	if n == 1 {
		if d.raw == "true" {
			return 0, 0, nil, errors.New("the record is already deferred")
		}
		return d.valStart, d.valEnd, []byte("true"), nil
	}
	s, n, err := p.find("status")
	if err != nil {
		return 0, 0, nil, err
	}
	ins := []byte(`,"deferred":true`)
	switch {
	case n == 1:
		return s.valEnd, s.valEnd, ins, nil
	case len(p.members) > 0:
		last := p.members[len(p.members)-1].valEnd
		return last, last, ins, nil
	default:
		return p.open + 1, p.open + 1, ins[1:], nil
	}
}

// removeDeferred removes the "deferred" member with its comma.
func removeDeferred(p hofPayload) (int, int, []byte, error) {
	d, n, err := p.find("deferred")
	if err != nil {
		return 0, 0, nil, err
	}
	if n == 0 {
		return 0, 0, nil, errors.New("the record has no deferred member")
	}
	switch {
	case d.prevEnd >= 0: // `,"deferred":true` after the previous value
		return d.prevEnd, d.valEnd, nil, nil
	case d.nextKeyStart >= 0: // first member: up to the next key
		return d.keyStart, d.nextKeyStart, nil, nil
	default: // the only member
		return d.keyStart, d.valEnd, nil, nil
	}
}

// setSuperseded sets the status of a duplicate to "superseded".
func setSuperseded(p hofPayload) (int, int, []byte, error) {
	s, n, err := p.find("status")
	if err != nil {
		return 0, 0, nil, err
	}
	if n == 0 {
		return 0, 0, nil, errors.New("the record has no status")
	}
	if bytes.Equal([]byte(s.raw), []byte(`"superseded"`)) {
		return 0, 0, nil, errors.New("the record is already superseded")
	}
	return s.valStart, s.valEnd, []byte(`"superseded"`), nil
}
