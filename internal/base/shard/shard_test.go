package shard

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	none := func(string) string { return "" }
	if s, err := Parse("2/4", none); err != nil || s != (Spec{2, 4}) {
		t.Errorf("Parse(2/4) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "1", "0/2", "3/2", "a/b", "1/0", "-1/2", "index/4"} {
		if _, err := Parse(bad, none); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// index/N is the Kubernetes completion index (0-based) plus one.
func TestParseIndex(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexVar {
				return v
			}
			return ""
		}
	}
	if s, err := Parse("index/4", env("0")); err != nil || s != (Spec{1, 4}) {
		t.Errorf("index 0 of 4 = %v, %v; want shard 1/4", s, err)
	}
	if s, err := Parse("index/4", env("3")); err != nil || s != (Spec{4, 4}) {
		t.Errorf("index 3 of 4 = %v, %v; want shard 4/4", s, err)
	}
	for _, bad := range []string{"4", "-1", "x"} {
		if _, err := Parse("index/4", env(bad)); err == nil {
			t.Errorf("index %q of 4 accepted", bad)
		}
	}
}

// Every key is in exactly one shard of N.
func TestContains(t *testing.T) {
	for _, key := range []string{"a.jsonl", "sessions/2026/rollout-x.jsonl", "-", ""} {
		in := 0
		for k := 1; k <= 7; k++ {
			if (Spec{k, 7}).Contains(key) {
				in++
			}
		}
		if in != 1 {
			t.Errorf("%q is in %d shards of 7", key, in)
		}
	}
}

func TestCheckSet(t *testing.T) {
	s := func(k, n int) *Spec { return &Spec{k, n} }
	for _, c := range []struct {
		specs []*Spec
		want  string // "" for no error
	}{
		{[]*Spec{nil}, ""},
		{[]*Spec{s(1, 1)}, ""},
		{[]*Spec{s(2, 3), s(3, 3), s(1, 3)}, ""},
		{[]*Spec{s(1, 3), s(1, 3), s(2, 3), s(3, 3)}, "r1 and r2 are both shard 1/3"},
		{[]*Spec{s(1, 3)}, "shards 2, 3 of 3 missing"},
		{[]*Spec{s(1, 3), s(3, 3)}, "shard 2 of 3 missing"},
		{[]*Spec{s(1, 2), s(2, 3)}, "r2 is shard 2/3, r1 shard 1/2"},
		{[]*Spec{nil, nil}, "r1 is the report of a whole run"},
		{[]*Spec{s(1, 2), nil}, "r2 is the report of a whole run"},
	} {
		names := make([]string, len(c.specs))
		for i := range names {
			names[i] = "r" + string(rune('1'+i))
		}
		err := CheckSet(names, c.specs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.specs, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want %q", c.specs, err, c.want)
		}
	}
}
