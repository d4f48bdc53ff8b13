package suggest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"fial-on", "fail-on", 2}, {"kitten", "sitting", 3}, {"select", "selct", 1}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"select", "ignore", "fail-on", "show-severity", "format", "baseline"}
	for _, c := range []struct {
		word string
		want []string
	}{
		{"fail_on", []string{"fail-on"}},
		{"selct", []string{"select"}},
		{"formats", []string{"format"}},
		{"severity", nil},
		{"zzzzzz", nil},
	} {
		if got := Closest(c.word, keys, 3); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}
