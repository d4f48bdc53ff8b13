package repair

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangesKeepWhatWasAdded(t *testing.T) {
	long := bytes.Repeat([]byte("x"), KeepBytes+10)
	in := []Change{
		{Rule: "item/missing-id", Line: 3, OutLine: 3, Offset: 120, Action: "set", Member: "payload.id", After: []byte(`"msg_1"`), AfterLen: 7},
		{Rule: "line/invalid-json", Line: 5, Offset: 300, Part: 2, Action: "quarantine", Before: long, HadBefore: true, BeforeLen: len(long)},
		{Rule: "item/missing-id", Line: 9, OutLine: 8, Offset: 900, Action: "set", Member: "payload.id", Before: []byte(`""`), HadBefore: true, BeforeLen: 2, After: []byte(`"msg_2"`), AfterLen: 7},
	}
	var cs Changes
	cs.Grow(1)
	for _, c := range in {
		cs.Add(c)
	}
	in[1].Before = long[:KeepBytes] // clipped
	if cs.Len() != len(in) {
		t.Fatalf("%d changes, want %d", cs.Len(), len(in))
	}
	for i, want := range in {
		if diff := cmp.Diff(want, cs.At(i)); diff != "" {
			t.Errorf("change %d (-want +got):\n%s", i, diff)
		}
	}
	n := 0
	for i, c := range cs.All {
		if c.Line != in[i].Line {
			t.Errorf("All: change %d is line %d, want %d", i, c.Line, in[i].Line)
		}
		n++
	}
	if n != len(in) || len(cs.names) != 6 {
		t.Errorf("All yielded %d, names %q", n, cs.names)
	}
	var none *Changes
	if none.Len() != 0 {
		t.Errorf("a nil Changes has %d", none.Len())
	}
}
