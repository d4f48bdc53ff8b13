package checks

import (
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	verify, home := Names(false), Names(true)
	for _, want := range []string{"ordinal/", "item/missing-id", "line/torn-tail"} {
		if !slices.Contains(verify, want) || slices.Contains(home, want) {
			t.Errorf("%s: in verify's names %v, in home's %v", want, slices.Contains(verify, want), slices.Contains(home, want))
		}
	}
	if len(home) < 2 || home[0] != "home/" || !strings.HasPrefix(home[1], "home/") {
		t.Errorf("home's names: %q", home)
	}
	if n := len(Rules()) + 1; len(verify)+len(home) <= n {
		t.Errorf("%d names for %d rules: areas missing", len(verify)+len(home), n-1)
	}
}
