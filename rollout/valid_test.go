package rollout

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckLine(t *testing.T) {
	tests := []struct {
		in                    string
		object, badUTF8, escN bool
	}{
		{`{}`, true, false, false},
		{` {"a":1} `, true, false, false},
		{`{"a":[1,2.5,-0,1e9,1E-2,true,false,null,{"b":"c"}]}`, true, false, false},
		{`{"a":"x\u0000y"}`, true, false, true},
		{`{"a":"x\\u0000y"}`, true, false, false}, // an escaped backslash, then text
		{"{\"a\":\"\xff\"}", true, true, false},
		{"{\"a\":\"h\xc3\xa9llo w\xc3\xb6rld, long enough for words\"}", true, false, false},
		{`[1]`, false, false, false},
		{`"s"`, false, false, false},
		{`{"a":1}{"b":2}`, false, false, false},
		{`{"a":01}`, false, false, false},
		{`{"a":1.}`, false, false, false},
		{`{"a":.5}`, false, false, false},
		{`{"a":-}`, false, false, false},
		{`{"a":tru}`, false, false, false},
		{`{"a":"\x"}`, false, false, false},
		{`{"a":"\u12"}`, false, false, false},
		{"{\"a\":\"tab\tinside\"}", false, false, false},
		{`{"a":1,}`, false, false, false},
		{`{"a" 1}`, false, false, false},
		{`{"a":[1,]}`, false, false, false},
		{`{"a":"unterminated}`, false, false, false},
		{`{`, false, false, false},
		{strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1), false, false, false},
	}
	for _, tt := range tests {
		got := checkLine([]byte(tt.in))
		got.lone, got.dups, got.ndups = false, nil, 0 // TestLoneSurrogate, TestDuplicateKeys
		want := lineCheck{object: tt.object, badUTF8: tt.badUTF8, escNUL: tt.escN}
		if got.object != want.object || (want.object && (got.badUTF8 != want.badUTF8 || got.escNUL != want.escNUL)) {
			t.Errorf("checkLine(%.60q) = %+v, want %+v", tt.in, got, want)
		}
	}
}

// TestLoneSurrogate: half of a UTF-16 surrogate pair is noted (issue 11);
// a whole pair, in either case, is not.
func TestLoneSurrogate(t *testing.T) {
	for in, lone := range map[string]bool{
		`{"a":"\ud800"}`:             true,
		`{"a":"x\uDBFFy"}`:           true,
		`{"a":"\udc00"}`:             true,
		`{"a":"\ud800\u0041"}`:       true,
		`{"a":"\ud83d\ude00"}`:       false,
		`{"a":"\uD83D\uDE00 ok"}`:    false,
		`{"a":"\\ud800"}`:            false, // an escaped backslash, then text
		`{"a":"\u00e9\u4e2d"}`:       false,
		`{"a":"\ud83d\ude00\udc00"}`: true,
	} {
		got := checkLine([]byte(in))
		if !got.object || got.lone != lone {
			t.Errorf("checkLine(%s) = %+v, want lone %v", in, got, lone)
		}
	}
}

// TestDuplicateKeys: a key repeated within one object is noted, at any
// depth (issue 11); the same key in different objects is not.
func TestDuplicateKeys(t *testing.T) {
	many := `{"a":{` + strings.Repeat(`"k":1,`, 0)
	for i := range 100 {
		many += fmt.Sprintf(`"k%d":1,`, i)
	}
	many += `"k7":2}}`
	for in, want := range map[string][]string{
		`{"type":"a","type":"b"}`:                         {"type"},
		`{"payload":{"type":"x","id":"1","type":"x"}}`:    {"type"},
		`{"a":{"x":1},"b":{"x":1},"x":[{"y":1},{"y":2}]}`: nil,
		`{"a":1,"b":{"a":2}}`:                             nil,
		many:                                              {"k7"},
		`{"a":{"b":1,"b":2},"c":3,"c":4}`:                 {"b", "c"},
	} {
		got := checkLine([]byte(in))
		if !got.object || !slices.Equal(got.dups, want) || got.ndups != len(want) {
			t.Errorf("checkLine(%.60s): dups %v (%d), want %v", in, got.dups, got.ndups, want)
		}
	}
}

// FuzzCheckLine compares the single-pass validator with encoding/json and
// unicode/utf8 on the inputs where both speak.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\u0000"}`, `{"a":[1,{"b":null}],"c":-1.5e+3}`, "{\"\xff\":1}", `{"a":"\"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := checkLine(b)
		trimmed := strings.TrimLeft(string(b), " \t\r\n")
		want := json.Valid(b) && strings.HasPrefix(trimmed, "{")
		if got.object != want {
			t.Fatalf("checkLine(%q).object = %v, encoding/json says %v", b, got.object, want)
		}
		if got.object && got.badUTF8 == utf8.Valid(b) {
			t.Fatalf("checkLine(%q).badUTF8 = %v, utf8.Valid = %v", b, got.badUTF8, utf8.Valid(b))
		}
	})
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain <b> & é", `"plain <b> & é"`},
		{"q\"b\\s/", `"q\"b\\s/"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x1f", `"\u0000\u001f"`},
	}
	for _, tt := range tests {
		got := string(AppendJSONString(nil, tt.in))
		if got != tt.want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != tt.in {
			t.Errorf("%s decodes to %q (%v), want %q", got, back, err, tt.in)
		}
	}
}

// TestScanPlain checks the word-at-a-time scan against a byte loop on
// every offset of inputs with each kind of stop byte at every position.
func TestScanPlain(t *testing.T) {
	stops := []byte{'"', '\\', 0x00, 0x1f, 0x80, 0xe9, 0xff}
	plain := []byte("abcdefghijklmnopqrstuvwxyz !#~\x7f 0123456789")
	naive := func(b []byte, i int) int {
		for ; i < len(b); i++ {
			if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return i
	}
	for n := 0; n <= 40; n++ {
		for pos := -1; pos < n; pos++ {
			for _, stop := range stops {
				b := append([]byte(nil), plain[:n]...)
				if pos >= 0 {
					b[pos] = stop
				}
				for i := 0; i <= n; i++ {
					if got, want := scanPlain(b, i), naive(b, i); got != want {
						t.Fatalf("scanPlain(%q, %d) = %d, want %d", b, i, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkCheckLine(b *testing.B) {
	short := []byte(`{"timestamp":"2026-04-07T09:00:00.123Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"the build fails because parser returns an error for empty input \"quoted\" line\n naïve café → ok tests pass now"}}`)
	long := []byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` +
		strings.Repeat(`ok  \tgithub.com/x/y\t0.01s\n`, 20000) + `"}}`)
	for _, c := range []struct {
		name string
		line []byte
	}{{"short", short}, {"long", long}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			for b.Loop() {
				if !checkLine(c.line).object {
					b.Fatal("invalid")
				}
			}
		})
	}
}
