package mergepatch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// wideObject is {"k0":v,...,"k{n-1}":v}.
func wideObject(n, v int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, v)
	}
	b.WriteByte('}')
	return b.String()
}

// bytesPerKey is what fn allocates on the heap, per key of an n-key patch.
func bytesPerKey(n int, fn func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

// A patch naming every member of a wide object (issue 36: a million keys)
// is merged in memory proportional to the patch: each node of the result
// is copied once, not a path of nodes per member (which allocated more
// than 2 KB per key), and the patch's keys are checked for repeats without
// a map. The target is left as it was, and both ways of merging agree.
func TestWidePatchIsLinear(t *testing.T) {
	const n = 1 << 16
	target := mustParse(t, `{"environment":`+wideObject(n, 1)+`}`)
	before := target.String()
	patch := `{"environment":` + wideObject(n, 2) + `}`
	want := `{"environment":` + wideObject(n, 2) + `}`

	var got *Value
	var ok bool
	perKey := bytesPerKey(n, func() { got, _, ok = MergeText(target, []byte(patch)) })
	if !ok || got.String() != want {
		t.Fatalf("MergeText of a wide patch: ok %v, same as wanted %v", ok, ok && got.String() == want)
	}
	t.Logf("MergeText: %.0f bytes per key", perKey)
	if perKey > 400 {
		t.Errorf("MergeText allocated %.0f bytes per key, want at most 400", perKey)
	}
	perKey = bytesPerKey(n, func() { got = Apply(target, mustParse(t, patch)) })
	if got.String() != want {
		t.Fatal("Apply of a wide patch differs")
	}
	t.Logf("Parse and Apply: %.0f bytes per key", perKey)
	if perKey > 600 {
		t.Errorf("Parse and Apply allocated %.0f bytes per key, want at most 600", perKey)
	}
	if target.String() != before {
		t.Error("merging changed the target")
	}
	// A second merge into the result copies its nodes again: the first
	// merge's ownership ended with it.
	again := Apply(got, mustParse(t, `{"environment":{"k0":3}}`))
	if v, _ := got.Get("environment"); v.String() != wideObject(n, 2) {
		t.Errorf("a later merge changed an earlier result: k0 is %s", func() string { x, _ := v.Get("k0"); return x.String() }())
	}
	if v, _ := again.Get("environment"); v == nil {
		t.Fatal("no environment")
	} else if x, _ := v.Get("k0"); x.String() != "3" {
		t.Errorf("k0 = %s, want 3", x)
	}
}
