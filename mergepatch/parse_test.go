package mergepatch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		``, ` `, `{`, `}`, `[`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{a:1}`, `{'a':1}`,
		`{} x`, `{}{}`, `1 2`, `nul`, `truex`, `True`, `NaN`, `-Infinity`, `+1`, `01`, `-`, `1.`, `.5`,
		`1e`, `1e+`, `0x10`, `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01b\"", "\"tab\there\"",
		"\"\xff\"", "\"\xc3\"", "\"\xed\xa0\x80\"", "{\"\xfe\":1}", "\xef\xbb\xbf{}", `[1 2]`, `{"a":1 "b":2}`,
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
		strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1),
		strings.Repeat(`[{"a":`, 100000) + "1" + strings.Repeat("}]", 100000),
	} {
		v, err := Parse([]byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%.40q) = %v, %v; want a *SyntaxError", in, v, err)
		}
		if json.Valid([]byte(in)) && utf8.ValidString(in) && len(in) < 1000 {
			t.Errorf("test bug: %q is valid JSON", in)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{` null `, `null`},
		{"\t\r\n true", `true`},
		{`-0`, `-0`},
		{`-0.0e-0`, `-0.0e-0`},
		{`1E+2`, `1E+2`},
		{`12345678901234567890123`, `12345678901234567890123`},
		{`"\u003c\/\"\\\b\f\n\r\t\ud83d\ude00 <>& é 😀"`, `"\u003c\/\"\\\b\f\n\r\t\ud83d\ude00 <>& é 😀"`},
		{`"\ud800"`, `"\ud800"`},
		{`[ 1 , " a b " , [ ] , { } ]`, `[1," a b ",[],{}]`},
		{`{ "b" : 1 , "a" : { } , "\u0063" : [ ] }`, `{"b":1,"a":{},"\u0063":[]}`},
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)},
		{strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth), strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth)},
	} {
		v, err := Parse([]byte(c.in))
		if err != nil {
			t.Errorf("Parse(%.40q): %v", c.in, err)
			continue
		}
		if got := string(v.AppendJSON(nil)); got != c.want {
			t.Errorf("Parse(%.40q).AppendJSON = %.60q, want %.60q", c.in, got, c.want)
		}
	}
}

func TestParseDoesNotAlias(t *testing.T) {
	t.Parallel()
	in := []byte(`{"a":"xyz","b":[1,2],"c":3}`)
	v := mustParse(t, string(in))
	v2, _ := Parse(in)
	v3, _ := ParseString(string(in))
	for i := range in {
		in[i] = ' '
	}
	for _, v := range []*Value{v, v2, v3} {
		if got, want := string(v.AppendJSON(nil)), `{"a":"xyz","b":[1,2],"c":3}`; got != want {
			t.Errorf("after overwriting the input: %s, want %s", got, want)
		}
	}
}

func TestDuplicates(t *testing.T) {
	t.Parallel()
	in := `{"a":1,"b":{"x":1,"x":2},"a":{"y":0},"c":[{"k":1,"\u006b":2,"k":3},[{"m":0,"m":0}]],` +
		`"d":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"5":55},` +
		`"e":[{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"5":55}],"f/~":{"z":1,"z":2}}`
	v := mustParse(t, in)
	off := func(s string, n int) int { // offset of the n-th occurrence of s
		i := -1
		for range n {
			i += 1 + strings.Index(in[i+1:], s)
		}
		return i
	}
	want := []Duplicate{
		{Path: "/b", Key: "x", Offset: off(`"x"`, 2)},
		{Path: "", Key: "a", Offset: off(`"a"`, 2)},
		{Path: "/c/0", Key: "k", Offset: off(`"\u006b"`, 1)},
		{Path: "/c/0", Key: "k", Offset: off(`"k"`, 2)},
		{Path: "/c/1/0", Key: "m", Offset: off(`"m"`, 2)},
		{Path: "/d", Key: "5", Offset: off(`"5"`, 2)},
		{Path: "/e/0", Key: "5", Offset: off(`"5"`, 4)},
		{Path: "/f~1~0", Key: "z", Offset: off(`"z"`, 2)},
	}
	if diff := cmp.Diff(want, v.Duplicates()); diff != "" {
		t.Errorf("Duplicates (-want +got):\n%s", diff)
	}
	// Last value at the first position; arrays keep their bytes.
	wantJSON := `{"a":{"y":0},"b":{"x":2},"c":[{"k":1,"\u006b":2,"k":3},[{"m":0,"m":0}]],` +
		`"d":{"1":1,"2":2,"3":3,"4":4,"5":55,"6":6,"7":7,"8":8,"9":9,"10":10},` +
		`"e":[{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"5":55}],"f/~":{"z":2}}`
	if got := string(v.AppendJSON(nil)); got != wantJSON {
		t.Errorf("AppendJSON\n got %s\nwant %s", got, wantJSON)
	}
	if got := v.DuplicateCount(); got != len(want) {
		t.Errorf("DuplicateCount = %d, want %d", got, len(want))
	}
	// A repeat at every level of a deep nesting: paths would take O(n²)
	// memory, so the list stops after 1 MiB of paths but the count is exact.
	const depth = 2000
	deep := mustParse(t, strings.Repeat(`{"a":1,"a":`, depth)+"1"+strings.Repeat("}", depth))
	if got := deep.DuplicateCount(); got != depth {
		t.Errorf("deep: DuplicateCount = %d, want %d", got, depth)
	}
	list := deep.Duplicates()
	if len(list) < 500 || len(list) >= depth {
		t.Errorf("deep: %d duplicates listed, want the first ones up to 1 MiB of paths", len(list))
	}
	for i, d := range list {
		if want := strings.Repeat("/a", i); d.Path != want || d.Offset != 11*i+7 {
			t.Fatalf("deep: duplicate %d = {%.20q... %d}, want {%.20q... %d}", i, d.Path, d.Offset, want, 11*i+7)
		}
	}
	if got := mustParse(t, `{"a":[{"a":1},{"a":2}],"b":{"a":1}}`).Duplicates(); got != nil {
		t.Errorf("Duplicates without repeats = %v", got)
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `1E0`, true},
		{`100`, `1e2`, true},
		{`100`, `1000e-1`, true},
		{`0.5`, `5E-1`, true},
		{`-0`, `0`, true},
		{`0e99`, `-0.000`, true},
		{`1`, `-1`, false},
		{`12345678901234567890`, `12345678901234567891`, false}, // equal as float64
		{`1e400`, `10e399`, true},
		{`1e400`, `1e401`, false},
		{`1e99999999999999999999999`, `10e99999999999999999999998`, true},
		{`"a"`, `"\u0061"`, true},
		{`"/"`, `"\/"`, true},
		{`"\ud83d\ude00"`, `"😀"`, true},
		{`"a"`, `"b"`, false},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`null`, `false`, false},
		{`0`, `false`, false},
		{`"1"`, `1`, false},
		{`[1,2]`, `[ 1 , 2.0 ]`, true},
		{`[1,2]`, `[2,1]`, false},
		{`[1]`, `[1,1]`, false},
		{`[{"a":1,"b":2}]`, `[{"b":2,"a":1}]`, true},
		{`[{"a":1,"a":2}]`, `[{"a":2}]`, true},
		{`[[]]`, `[{}]`, false},
		{`{"a":1,"b":[2]}`, `{"b":[2],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`{"a":1,"b":1}`, `{"a":1,"c":1}`, false},
		{`{"a":null}`, `{}`, false},
		{`{}`, `[]`, false},
	} {
		a, b := mustParse(t, c.a), mustParse(t, c.b)
		if got := Equal(a, b); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Equal(b, a); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
	if !Equal(nil, mustParse(t, "null")) || Equal(nil, mustParse(t, "{}")) {
		t.Errorf("nil must equal null and only null")
	}
}

func TestAccessors(t *testing.T) {
	t.Parallel()
	v := mustParse(t, `{"s":"a\nb \u00e9","n":1.50,"arr":[ 1, 2 ],"o":{"x":true},"z":null}`)
	var kinds []string
	for _, m := range v.Members() {
		kinds = append(kinds, m.Key+":"+m.Value.Kind().String())
	}
	if diff := cmp.Diff([]string{"s:string", "n:number", "arr:array", "o:object", "z:null"}, kinds); diff != "" {
		t.Errorf("Members (-want +got):\n%s", diff)
	}
	s, _ := v.Get("s")
	if got, ok := s.Text(); !ok || got != "a\nb é" {
		t.Errorf("Text = %q, %v", got, ok)
	}
	n, _ := v.Get("n")
	if _, ok := n.Text(); ok {
		t.Errorf("Text of a number succeeded")
	}
	for key, want := range map[string]string{"s": `"a\nb \u00e9"`, "n": `1.50`, "arr": `[1,2]`, "o": `{"x":true}`, "z": `null`} {
		m, ok := v.Get(key)
		if !ok || string(m.Raw()) != want {
			t.Errorf("Get(%q).Raw() = %s, %v; want %s", key, m.Raw(), ok, want)
		}
	}
	if _, ok := v.Get("missing"); ok {
		t.Errorf("Get(missing) found something")
	}
	if _, ok := n.Get("x"); ok || n.Members() != nil {
		t.Errorf("a number has members")
	}
	var nilV *Value
	if nilV.Kind() != Null || string(nilV.Raw()) != "null" || nilV.Members() != nil || nilV.Duplicates() != nil {
		t.Errorf("nil *Value is not null")
	}
	out, err := json.Marshal(map[string]*Value{"v": v})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]map[string]any
	if err := json.Unmarshal(out, &back); err != nil || back["v"]["n"] != 1.5 || back["v"]["s"] != "a\nb é" {
		t.Errorf("json.Marshal via MarshalJSON = %s, %v", out, err)
	}
}

// TestLazyObjects covers objects below eagerDepth, kept as text until
// first use: what reads them, what merges into them, and the objects that
// must be built at once (a null member, a repeated key).
func TestLazyObjects(t *testing.T) {
	t.Parallel()
	doc := mustParse(t, `{"s":{"f":{ "a" : 1, "b":{"c":[1, {"d":null}]}},"g":{"x":1}}}`)
	f, _ := doc.Get("s")
	f, _ = f.Get("f")
	if f.obj.Load() != nil || f.raw != `{"a":1,"b":{"c":[1,{"d":null}]}}` {
		t.Fatalf("s.f: built %v, text %q; want lazy, compact text", f.obj.Load() != nil, f.raw)
	}
	if got := doc.String(); got != `{"s":{"f":{"a":1,"b":{"c":[1,{"d":null}]}},"g":{"x":1}}}` {
		t.Errorf("String() = %s", got)
	}
	if b, ok := f.Get("b"); !ok || b.String() != `{"c":[1,{"d":null}]}` {
		t.Errorf("s.f.b = %v, %v", b, ok)
	}
	if ms := f.Members(); len(ms) != 2 || ms[0].Key != "a" || ms[1].Key != "b" {
		t.Errorf("Members() = %v", ms)
	}
	if !Equal(f, mustParse(t, `{"b":{"c":[1,{"d":null}]},"a":1.0}`)) {
		t.Errorf("Equal with the same object built from other text: false")
	}

	// Merging into a lazy member, and a lazy patch member into a built one.
	got, changed := Merge(doc, mustParse(t, `{"s":{"f":{"b":{"c":2,"e":{"h":{"i":null}}}},"g":{"y":{"z":{}}}}}`))
	if want := `{"s":{"f":{"a":1,"b":{"c":2,"e":{"h":{}}}},"g":{"x":1,"y":{"z":{}}}}}`; !changed || got.String() != want {
		t.Errorf("Merge = %s, %v; want %s, true", got, changed, want)
	}
	if doc.String() != `{"s":{"f":{"a":1,"b":{"c":[1,{"d":null}]}},"g":{"x":1}}}` {
		t.Errorf("Merge changed its target: %s", doc)
	}

	// A null member or a repeated key below eagerDepth: built at once.
	p := mustParse(t, `{"s":{"f":{"a":null,"b":1},"g":{"k":1,"k":2}}}`)
	s, _ := p.Get("s")
	for _, key := range []string{"f", "g"} {
		if v, _ := s.Get(key); v.obj.Load() == nil || v.raw != "" {
			t.Errorf("s.%s is lazy, want built", key)
		}
	}
	if got := Apply(mustParse(t, `{}`), p).String(); got != `{"s":{"f":{"b":1},"g":{"k":2}}}` {
		t.Errorf("Apply onto {} = %s", got)
	}
	if d := p.Duplicates(); len(d) != 1 || d[0].Path != "/s/g" || d[0].Key != "k" {
		t.Errorf("Duplicates() = %v, want one at /s/g", d)
	}
	if got := NullMembers(p); len(got) != 1 || got[0] != "/s/f/a" {
		t.Errorf("NullMembers() = %v", got)
	}
}

// TestLazyObjectConcurrentUse builds one lazy object from several
// goroutines (go test -race checks the publication).
func TestLazyObjectConcurrentUse(t *testing.T) {
	t.Parallel()
	doc := mustParse(t, `{"s":{"f":{"a":1,"b":2}}}`)
	s, _ := doc.Get("s")
	f, _ := s.Get("f")
	done := make(chan *Value)
	for range 4 {
		go func() {
			v, _ := f.Get("b")
			done <- v
		}()
	}
	for range 4 {
		if v := <-done; v.String() != "2" {
			t.Errorf("Get(b) = %s", v)
		}
	}
}
