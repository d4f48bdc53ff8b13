package reconstruct

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// testItems are n items across several blocks, with a text longer than an
// arena block, items without ids or call ids, and lines and indexes too wide
// for the compact fields.
func testItems(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		it := Item{Type: []string{"message", "function_call", "reasoning"}[i%3], Line: i + 2, Offset: int64(i) * 300, Index: i%5 - 1, hash: uint64(i) * 7}
		switch i % 4 {
		case 0: // packed
			it.ID = fmt.Sprintf("msg_%08x-8ad0-72ca-8ae3-f0c3725f6a4e", i)
		case 1: // not packed: upper case
			it.ID = fmt.Sprintf("fc_%08X-8AD0-72CA-8AE3-F0C3725F6A4E", i)
		case 2:
			it.ID = fmt.Sprintf("msg_%08d", i)
		}
		if i%3 == 1 {
			it.CallID = fmt.Sprintf("call_%d", i)
		}
		items[i] = it
	}
	items[7].ID = strings.Repeat("x", textBlock+10)
	// Stored as they are, these are the bytes of item 0's packed id.
	packed, _ := packID(nil, items[0].ID)
	items[9].ID = string(packed)
	items[10].ID = "_" + items[0].ID[4:]
	items[n/2].Line = math.MaxUint32 + 5
	items[n/2+1].Index = math.MaxInt32 + 1
	items[n/2+2].Line = math.MaxUint32
	return items
}

func collect(h *History) []Item {
	var out []Item
	for it := range h.All() {
		out = append(out, it)
	}
	return out
}

func TestHistoryRoundTrip(t *testing.T) {
	items := testItems(3*histBlock + 17)
	h := NewHistory(items...)
	if diff := cmp.Diff(items, collect(h), cmp.AllowUnexported(Item{})); diff != "" {
		t.Fatalf("items (-appended +read):\n%s", diff)
	}
	for _, i := range []int{0, 7, histBlock, len(items) / 2, len(items) - 1} {
		if p := h.pos(i); p.Line != items[i].Line || p.Offset != items[i].Offset {
			t.Errorf("pos(%d) = %+v, want line %d offset %d", i, p, items[i].Line, items[i].Offset)
		}
		if got := h.index(i); got != items[i].Index {
			t.Errorf("index(%d) = %d, want %d", i, got, items[i].Index)
		}
	}
}

// TestHistoryTruncate: a rollback truncates and appends again; what is
// read back is the prefix plus the new items, and the dropped text is
// freed rather than kept behind the new items'.
func TestHistoryTruncate(t *testing.T) {
	items := testItems(2*histBlock + 100)
	for _, n := range []int{0, 1, 8, histBlock, histBlock + 1, len(items) / 2, len(items) - 1} {
		h := NewHistory(items...)
		textBefore := arenaBytes(h)
		h.truncate(n)
		if h.Len() != n {
			t.Fatalf("truncate(%d): Len %d", n, h.Len())
		}
		more := testItems(len(items))[n:]
		for _, it := range more {
			h.append(it)
		}
		want := append(append([]Item{}, items[:n]...), more...)
		if diff := cmp.Diff(want, collect(h), cmp.AllowUnexported(Item{})); diff != "" {
			t.Fatalf("truncate(%d) then append (-want +got):\n%s", n, diff)
		}
		if got := arenaBytes(h); got != textBefore {
			t.Errorf("truncate(%d) then append: %d bytes of text, want %d", n, got, textBefore)
		}
	}
}

func arenaBytes(h *History) int {
	n := 0
	for _, b := range h.text {
		n += len(b)
	}
	return n
}

// TestTextIndex: the index finds every key, keeps the first item of an id
// when asked to, and follows put for call ids, across growth.
func TestTextIndex(t *testing.T) {
	items := testItems(5000)
	h := NewHistory(items...)
	ids, calls := textIndex{}, textIndex{call: true}
	first := map[string]int{}
	lastCall := map[string]int{}
	for i, it := range items {
		if it.ID != "" {
			if _, ok := ids.get(h, it.ID); !ok {
				ids.put(h, i)
				first[it.ID] = i
			}
		}
		if it.CallID != "" {
			calls.put(h, i)
			lastCall[it.CallID] = i
		}
	}
	for id, want := range first {
		if got, ok := ids.get(h, id); !ok || got != want {
			t.Errorf("ids.get(%.20s) = %d, %v; want %d", id, got, ok, want)
		}
	}
	for id, want := range lastCall {
		if got, ok := calls.get(h, id); !ok || got != want {
			t.Errorf("calls.get(%s) = %d, %v; want %d", id, got, ok, want)
		}
	}
	for _, absent := range []string{"", "msg_x", "call_0"} {
		if _, ok := ids.get(h, absent); ok {
			t.Errorf("ids.get(%q) found an item", absent)
		}
	}
	if ids.n != len(first) || calls.n != len(lastCall) {
		t.Errorf("counts %d, %d; want %d, %d", ids.n, calls.n, len(first), len(lastCall))
	}
}

func TestPackID(t *testing.T) {
	for _, tc := range []struct {
		id     string
		packed bool
	}{
		{"msg_019d672b-8ad0-72ca-8ae3-f0c3725f6a4e", true},
		{"x_00000000-0000-0000-0000-000000000000", true},
		{"a_b_019d672b-8ad0-72ca-8ae3-f0c3725f6a4e", false}, // the prefix is "a"
		{"msg_019D672B-8AD0-72CA-8AE3-F0C3725F6A4E", false},
		{"msg_019d672b08ad0072ca08ae30f0c3725f6a4e", false},
		{"msg_019d672b-8ad0-72ca-8ae3-f0c3725f6a4", false},
		{"019d672b-8ad0-72ca-8ae3-f0c3725f6a4e", false},
		{"_019d672b-8ad0-72ca-8ae3-f0c3725f6a4e", false},
		{"msg_019d672g-8ad0-72ca-8ae3-f0c3725f6a4e", false},
		{"", false},
	} {
		b, packed := packID([]byte("pre"), tc.id)
		if packed != tc.packed {
			t.Errorf("packID(%q): packed %v, want %v", tc.id, packed, tc.packed)
		}
		if packed {
			if len(b) != 3+len(tc.id)-37+16 {
				t.Errorf("packID(%q): %d bytes", tc.id, len(b)-3)
			}
			b = unpackID([]byte("pre"), b[3:])
		}
		if string(b) != "pre"+tc.id {
			t.Errorf("packID(%q) then unpackID: %q", tc.id, b[3:])
		}
	}
}

// TestHistItemSize guards the bytes an item costs: a million-item history
// holds a million of them.
func TestHistItemSize(t *testing.T) {
	if s := unsafe.Sizeof(histItem{}); s > 48 {
		t.Errorf("histItem is %d bytes, want at most 48", s)
	}
}
