package mergepatch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestFootprint: a world state's footprint is within a factor of two of
// the heap its parse holds (what the prefix memo budgets by), for the
// shapes states have: many small members, nested sections, long texts.
func TestFootprint(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"files":{`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"src/pkg%d/file%d.go":{"status":"modified","lines":%d,"tags":["a","b"]}`, i%40, i, i)
	}
	b.WriteString(`},"notes":"` + strings.Repeat("x", 200000) + `","empty":{}}`)
	text := b.String()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	// Build every object, as replaying patches onto the state does.
	var walk func(*Value)
	walk = func(v *Value) {
		for _, m := range v.Members() {
			walk(m.Value)
		}
	}
	walk(v)
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int(after.HeapAlloc) - int(before.HeapAlloc)
	got := v.Footprint()
	if got < held/2 || got > 2*held {
		t.Errorf("Footprint = %d bytes, the parse holds %d", got, held)
	}
	if small := (&Value{kind: String, raw: `"a"`}).Footprint(); small <= 0 || small >= got {
		t.Errorf("Footprint of a short string = %d", small)
	}
	if (*Value)(nil).Footprint() != 0 {
		t.Error("a nil value has a footprint")
	}
	runtime.KeepAlive(v)
}
