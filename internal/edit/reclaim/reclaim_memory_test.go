package reclaim

import (
	"fmt"
	"testing"
)

// The constant answers say what the formatted one would.
func TestNotSuperseded(t *testing.T) {
	t.Parallel()
	for n := range 4 {
		want := fmt.Sprintf("no compaction is superseded by a later one (%d compaction(s); two are needed)", n)
		if got := notSuperseded(n); got != want {
			t.Errorf("notSuperseded(%d) = %q, want %q", n, got, want)
		}
	}
}

// Plans skipped for the same reasons share one map; other reasons keep
// their own.
func TestSkipReasonsShared(t *testing.T) {
	t.Parallel()
	sr := skipReasons{}
	a := sr.shared(map[string]string{"x": "1", "y": "2"})
	b := sr.shared(map[string]string{"y": "2", "x": "1"})
	c := sr.shared(map[string]string{"x": "1", "y": "3"})
	d := sr.shared(map[string]string{"x": "1\x00y\x002"})
	if fmt.Sprintf("%p", a) != fmt.Sprintf("%p", b) {
		t.Errorf("equal reasons are two maps")
	}
	if fmt.Sprintf("%p", a) == fmt.Sprintf("%p", c) || c["y"] != "3" {
		t.Errorf("other reasons share the first map: %v", c)
	}
	if len(d) != 1 {
		t.Errorf("reasons holding the separator were merged with others: %v", d)
	}
}
