package frames

import "testing"

func TestCanonicalJSON(t *testing.T) {
	same := [][2]string{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [ true , null ] , "a" : 1.0 } `},
		{`1`, `1e0`}, {`0.1`, `1e-1`}, {`0`, `-0`}, {`-0.0`, `0E5`},
		{`"é\n"`, `"\u00e9\u000a"`}, {`"\/"`, `"/"`}, {`"😀"`, `"\ud83d\ude00"`},
		{`{"a":1,"a":2}`, `{"a":2}`}, // the last duplicate wins, as in JSON.parse
		{`12345678901234567890123`, `1.2345678901234567890123e22`},
	}
	for _, p := range same {
		a, errA := canonicalJSON([]byte(p[0]))
		b, errB := canonicalJSON([]byte(p[1]))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s vs %s: %q (%v) != %q (%v)", p[0], p[1], a, errA, b, errB)
		}
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":"1"}`}, {`[1,2]`, `[2,1]`}, {`0.1`, `0.10000000000000001`},
		{`12345678901234567890123`, `12345678901234567890124`}, {`{"a":null}`, `{}`}, {`"a"`, `"A"`},
	}
	for _, p := range differ {
		a, _ := canonicalJSON([]byte(p[0]))
		b, _ := canonicalJSON([]byte(p[1]))
		if string(a) == string(b) {
			t.Errorf("%s and %s are both %q", p[0], p[1], a)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} {}`, `nul`, `{"a":1}x`} {
		if c, err := canonicalJSON([]byte(bad)); err == nil {
			t.Errorf("%q: canonical %q, want an error", bad, c)
		}
	}
	if c, _ := canonicalJSON([]byte(`{"q":"\"\\\u0001<&>"}`)); string(c) != `{"q":"\"\\\u0001<&>"}` {
		t.Errorf("escapes: %s", c)
	}
}
