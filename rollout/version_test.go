package rollout

import "testing"

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
		ok   bool
	}{
		{"0.58.0", Version{0, 58, 0}, true},
		{"0.153.4", Version{0, 153, 4}, true},
		{"0.104.0-alpha.2", Version{0, 104, 0}, true},
		{"v0.77", Version{0, 77, 0}, true},
		{"", Version{}, false},
		{"dev", Version{}, false},
		{"0.x.1", Version{}, false},
	} {
		got, ok := ParseVersion(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	a, _ := ParseVersion("0.49.0")
	b, _ := ParseVersion("0.104.0")
	if !a.Less(b) || b.Less(a) || !b.AtLeast(a) || !a.AtLeast(a) {
		t.Errorf("ordering of %v and %v is wrong", a, b)
	}
}
