package mergepatch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rfcCases are the 15 examples of RFC 7396 Appendix A: target, patch, result.
var rfcCases = [][3]string{
	{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
	{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
	{`{"a":"b"}`, `{"a":null}`, `{}`},
	{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
	{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
	{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
	{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
	{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
	{`["a","b"]`, `["c","d"]`, `["c","d"]`},
	{`{"a":"b"}`, `["c"]`, `["c"]`},
	{`{"a":"foo"}`, `null`, `null`},
	{`{"a":"foo"}`, `"bar"`, `"bar"`},
	{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
	{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
	{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
}

// deviationCases are where evanphx/json-patch differs from RFC 7396 or where
// this package promises more (byte preservation, order).
var deviationCases = []struct {
	name                string
	target, patch, want string
}{
	{"null target", `null`, `{"a":1,"b":null,"c":{"d":null,"e":2}}`, `{"a":1,"c":{"e":2}}`},
	{"null target without nulls", `null`, `{"a":{"b":[null]}}`, `{"a":{"b":[null]}}`},
	{"scalar target", `"x"`, `{"a":null}`, `{}`},
	{"nulls inside arrays are kept", `{}`, `{"a":[{"b":null}]}`, `{"a":[{"b":null}]}`},
	{"array replaced opaquely", `{"a":[{"b":1}]}`, `{"a":[{"c":null}]}`, `{"a":[{"c":null}]}`},
	{"exact bytes of untouched values",
		`{"big":12345678901234567890,"e":1E2,"s":"\u003c<&>","f":-0.50e+01,"k":{"\u0061":[ 1 , {"x" : null} ]}}`,
		`{"other":true}`,
		`{"big":12345678901234567890,"e":1E2,"s":"\u003c<&>","f":-0.50e+01,"k":{"\u0061":[1,{"x":null}]},"other":true}`},
	{"existing keys keep position, new keys in patch order", `{"a":1,"b":2,"c":3}`, `{"z":0,"b":20,"a":null,"y":9}`, `{"b":20,"c":3,"z":0,"y":9}`},
	{"escaped patch key matches plain target key", `{"a":1}`, `{"\u0061":2}`, `{"a":2}`},
	{"whitespace", " { \"a\" : { \"b\" : 1 } } ", "\t{\"a\":{\"c\":[ 2,\n3 ]}}\r\n", `{"a":{"b":1,"c":[2,3]}}`},
	{"deep delete leaves empty object", `{"a":{"b":{"c":1}}}`, `{"a":{"b":{"c":null}}}`, `{"a":{"b":{}}}`},
	{"empty patch", `{"a":1}`, `{}`, `{"a":1}`},
	{"patch into big object", bigObject(20, ""), `{"k03":null,"k07":{"v":"x"},"n":1}`,
		strings.Replace(strings.Replace(bigObject(20, `,"n":1`), `"k03":{"v":3},`, "", 1), `"k07":{"v":7}`, `"k07":{"v":"x"}`, 1)},
}

// bigObject returns {"k00":{"v":0},...} with n members and extra appended
// before the closing brace.
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + string(rune('0'+i/10)) + string(rune('0'+i%10)) + `":{"v":` + itoa(i) + `}`)
	}
	return b.String() + extra + "}"
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func mustParse(t testing.TB, s string) *Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

func TestApplyRFC7396(t *testing.T) {
	t.Parallel()
	for _, c := range rfcCases {
		target, patch := mustParse(t, c[0]), mustParse(t, c[1])
		got := Apply(target, patch).AppendJSON(nil)
		if string(got) != c[2] {
			t.Errorf("Apply(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
		if _, got := Merge(target, patch); got != !Equal(target, mustParse(t, c[2])) {
			t.Errorf("Merge(%s, %s) reports changed %v", c[0], c[1], got)
		}
	}
}

func TestApplyDeviations(t *testing.T) {
	t.Parallel()
	for _, c := range deviationCases {
		t.Run(c.name, func(t *testing.T) {
			target, patch := mustParse(t, c.target), mustParse(t, c.patch)
			if got := string(Apply(target, patch).AppendJSON(nil)); got != c.want {
				t.Errorf("Apply(%s, %s)\n got %s\nwant %s", c.target, c.patch, got, c.want)
			}
		})
	}
}

func TestApplyNilTarget(t *testing.T) {
	t.Parallel()
	patch := mustParse(t, `{"a":{"b":null,"c":1},"d":null}`)
	if got, want := string(Apply(nil, patch).AppendJSON(nil)), `{"a":{"c":1}}`; got != want {
		t.Errorf("Apply(nil, patch) = %s, want %s", got, want)
	}
	if got := Apply(mustParse(t, `{"a":1}`), nil); got.Kind() != Null || string(got.AppendJSON(nil)) != "null" {
		t.Errorf("Apply(target, nil) = %v, want null", got)
	}
}

func TestApplyDoesNotMutate(t *testing.T) {
	t.Parallel()
	const target = `{"a":{"b":1,"c":[1,{"d":null}]},"e":"x","f":{"g":{"h":true}},` +
		`"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8}`
	for _, patch := range []string{
		`{"a":{"b":null,"z":2},"e":null,"new":{"x":null,"y":1}}`,
		`{"k3":null,"k9":9}`,
		`{"k3":30,"f":{"g":{"h":false}}}`,
		`{"a":[1]}`,
		`[]`,
		`{"f":{"g":null},"a":{"c":null}}`,
	} {
		tv, pv := mustParse(t, target), mustParse(t, patch)
		tb, pb := string(tv.AppendJSON(nil)), string(pv.AppendJSON(nil))
		r1 := Apply(tv, pv)
		r1b := string(r1.AppendJSON(nil))
		r2 := Apply(tv, pv) // same inputs again: must give the same result
		if got := string(tv.AppendJSON(nil)); got != tb {
			t.Errorf("patch %s modified target:\n got %s\nwant %s", patch, got, tb)
		}
		if got := string(pv.AppendJSON(nil)); got != pb {
			t.Errorf("patch %s modified itself: got %s", patch, got)
		}
		if got := string(r2.AppendJSON(nil)); got != r1b {
			t.Errorf("second Apply of %s = %s, first gave %s", patch, got, r1b)
		}
		// Applying to the result must not reach back into the checkpoint.
		Apply(r1, mustParse(t, `{"a":{"b":99},"k0":null,"more":1}`))
		if got := string(r1.AppendJSON(nil)); got != r1b {
			t.Errorf("Apply on result of %s modified it: got %s, want %s", patch, got, r1b)
		}
	}
}

func TestApplySharesUnchanged(t *testing.T) {
	t.Parallel()
	target := mustParse(t, `{"a":{"x":1},"b":{"y":2},"c":3}`)
	if got := Apply(target, mustParse(t, `{"a":{"x":1},"c":3,"zz":null}`)); got != target {
		t.Errorf("no-op patch returned a copy %s", got)
	}
	got := Apply(target, mustParse(t, `{"a":{"x":5}}`))
	b1, _ := target.Get("b")
	b2, _ := got.Get("b")
	if b1 != b2 {
		t.Errorf("unchanged member b was not shared")
	}
}

func TestMergeChanged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		target, patch string
		want          bool
	}{
		{`{"a":1}`, `{}`, false},
		{`{"a":1}`, `{"a":1.0}`, false},
		{`{"a":1}`, `{"a":2}`, true},
		{`{"a":1}`, `{"b":null}`, false},
		{`{"a":1}`, `{"a":null}`, true},
		{`{"a":{"b":[1, 2]}}`, `{"a":{"b":[1,2]}}`, false},
		{`{"a":{"b":[1,2]}}`, `{"a":{"b":[2,1]}}`, true},
		{`{"a":{}}`, `{"a":{"x":null}}`, false},
		{`{}`, `{"a":{"x":null}}`, true},
		{`{"a":"\u00e9"}`, `{"a":"é"}`, false},
		{`null`, `{}`, true},
		{`null`, `null`, false},
		{`[1]`, `[1]`, false},
		{`{"a":1}`, `{"a":1}`, false},
	} {
		target, patch := mustParse(t, c.target), mustParse(t, c.patch)
		if _, got := Merge(target, patch); got != c.want {
			t.Errorf("Merge(%s, %s) reports changed %v, want %v", c.target, c.patch, got, c.want)
		}
		if got := !Equal(Apply(target, patch), target); got != c.want {
			t.Errorf("!Equal(Apply(%s, %s), target) = %v, want %v", c.target, c.patch, got, c.want)
		}
	}
}

func TestNullMembers(t *testing.T) {
	t.Parallel()
	v := mustParse(t, `{"a":null,"b":{"c":null,"d":[{"e":null}],"x":1},"f~/":null,"g":{"h":{"i":null}}}`)
	want := []string{"/a", "/b/c", "/f~0~1", "/g/h/i"}
	if diff := cmp.Diff(want, NullMembers(v)); diff != "" {
		t.Errorf("NullMembers (-want +got):\n%s", diff)
	}
	if got := NullMembers(mustParse(t, `[{"a":null}]`)); got != nil {
		t.Errorf("NullMembers of an array = %q, want none", got)
	}
}

func TestMergeText(t *testing.T) {
	// The RFC examples with an object target and patch, merged from text.
	for _, c := range rfcCases {
		tv := mustParse(t, c[0])
		got, _, ok := MergeText(tv, []byte(c[1]))
		if tv.Kind() != Object || !strings.HasPrefix(c[1], "{") {
			if ok {
				t.Errorf("MergeText(%s, %s) accepted a non-object", c[0], c[1])
			}
			continue
		}
		if !ok {
			t.Errorf("MergeText(%s, %s) declined", c[0], c[1])
			continue
		}
		if enc := got.String(); enc != c[2] {
			t.Errorf("MergeText(%s, %s) = %s, want %s", c[0], c[1], enc, c[2])
		}
	}
	base := `{"env":{"cwd":"/a"},"files":{"x":{"n":1}},"turn":0}`
	for _, c := range []struct {
		name, patch, want string
		changed, ok       bool
	}{
		{"add below a section", `{"files":{"y":{"n":2}},"turn":1}`, `{"env":{"cwd":"/a"},"files":{"x":{"n":1},"y":{"n":2}},"turn":1}`, true, true},
		{"no change", ` {"files":{"x":{"n":1}},"env":{}} `, base, false, true},
		{"delete a section member", `{"files":{"x":null}}`, `{"env":{"cwd":"/a"},"files":{},"turn":0}`, true, true},
		{"deeper merge", `{"files":{"x":{"n":null,"m":[null]}}}`, `{"env":{"cwd":"/a"},"files":{"x":{"m":[null]}},"turn":0}`, true, true},
		{"new section drops nulls", `{"tools":{"a":null,"b":{"c":null}}}`, `{"env":{"cwd":"/a"},"files":{"x":{"n":1}},"turn":0,"tools":{"b":{}}}`, true, true},
		{"repeated key at the root", `{"turn":1,"turn":2}`, "", false, false},
		{"repeated key in a section", `{"files":{"y":1,"y":2}}`, "", false, false},
		{"repeated key deeper", `{"files":{"y":{"a":1,"a":2}}}`, "", false, false},
		{"invalid", `{"turn":1`, "", false, false},
		{"trailing bytes", `{"turn":1} x`, "", false, false},
		{"array", `[1]`, "", false, false},
		{"many members", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"turn":3,"q":null}`,
			`{"env":{"cwd":"/a"},"files":{"x":{"n":1}},"turn":3,"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16}`, true, true},
		// Past 16 keys repeats are found by a key set, not the list.
		{"many members, a target key repeated", `{"turn":1,"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"turn":2}`, "", false, false},
		{"many members, a new key repeated", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":1,"q":2}`, "", false, false},
		{"many members, a deletion repeated", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":null,"q":null}`, "", false, false},
	} {
		tv := mustParse(t, base)
		got, changed, ok := MergeText(tv, []byte(c.patch))
		if ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.name, ok, c.ok)
			continue
		}
		if tv.String() != base {
			t.Errorf("%s: target modified: %s", c.name, tv)
		}
		if !ok {
			continue
		}
		if enc := got.String(); enc != c.want || changed != c.changed {
			t.Errorf("%s: = %s, %v; want %s, %v", c.name, enc, changed, c.want, c.changed)
		}
	}
}
