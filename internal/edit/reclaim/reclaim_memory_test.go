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
