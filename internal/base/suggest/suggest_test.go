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

func TestHint(t *testing.T) {
	flag := func(n string) string { return "--" + n }
	names := []string{"fail-on", "format", "jobs"}
	if got, want := Hint("fial-on", names, 2, flag, "see help"), "did you mean --fail-on? (see help)"; got != want {
		t.Errorf("Hint(fial-on) = %q, want %q", got, want)
	}
	if got, want := Hint("bogus", names, 2, flag, "see help"), "see help"; got != want {
		t.Errorf("Hint(bogus) = %q, want %q", got, want)
	}
}
