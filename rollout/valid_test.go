package rollout

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
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
// unicode/utf8 on the inputs where both speak, and with refEscapes on what
// the escapes hold.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\u0000"}`, `{"a":[1,{"b":null}],"c":-1.5e+3}`, "{\"\xff\":1}", `{"a":"\"\\"}`,
		`{"a":"\ud83d\ude00\udc00 and some text after it to reach the word loop"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { compareCheckLine(t, b) })
}

// compareCheckLine fails t when checkLine disagrees with encoding/json,
// unicode/utf8 or refEscapes on b.
func compareCheckLine(t *testing.T, b []byte) {
	t.Helper()
	got := checkLine(b)
	trimmed := strings.TrimLeft(string(b), " \t\r\n")
	want := json.Valid(b) && strings.HasPrefix(trimmed, "{")
	if got.object != want {
		t.Fatalf("checkLine(%q).object = %v, encoding/json says %v", b, got.object, want)
	}
	if !got.object {
		return
	}
	if got.badUTF8 == utf8.Valid(b) {
		t.Fatalf("checkLine(%q).badUTF8 = %v, utf8.Valid = %v", b, got.badUTF8, utf8.Valid(b))
	}
	if nul, lone := refEscapes(b); got.escNUL != nul || got.lone != lone {
		t.Fatalf("checkLine(%q): escNUL %v lone %v, want %v %v", b, got.escNUL, got.lone, nul, lone)
	}
}

// refEscapes is the plain reading of the escapes of a valid JSON text, one
// byte at a time: whether one is \u0000, and whether a surrogate escape
// lacks its other half.
func refEscapes(b []byte) (nul, lone bool) {
	var units []rune // the \u escapes of the current run, in order
	flush := func() {
		for k := 0; k < len(units); k++ {
			switch u := units[k]; {
			case utf16.IsSurrogate(u) && u < 0xdc00 && k+1 < len(units) && units[k+1] >= 0xdc00 && units[k+1] < 0xe000:
				k++ // a pair
			case utf16.IsSurrogate(u):
				lone = true
			}
		}
		units = units[:0]
	}
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
			flush()
		case c == '\\' && b[i+1] == 'u':
			u, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
			nul = nul || u == 0
			units = append(units, rune(u))
			i += 5
		case c == '\\':
			flush()
			i++
		default:
			flush()
		}
	}
	return nul, lone
}

// TestCheckLineRandomStrings compares checkLine with encoding/json,
// unicode/utf8 and refEscapes on strings dense in the bytes and escapes the
// string scan stops at, at every alignment of its eight-byte words.
func TestCheckLineRandomStrings(t *testing.T) {
	pieces := []string{"a", "b", "0", " ", "~", "\x7f", `"`, `\`, `\\`, `\"`, `\n`, `\t`, `\/`, `\x`, `\u`,
		`\u0000`, `\u00e9`, `\uD83D`, `\ude00`, `\udBfF`, `\u12`, "\x00", "\x1f", "\t", "\n",
		"é", "€", "😀", "\x80", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xe2\x82"}
	rng := rand.New(rand.NewPCG(12, 1))
	for range 100000 {
		var s strings.Builder
		s.WriteString(`{"k":"`)
		for range rng.IntN(48) {
			if rng.IntN(3) == 0 {
				s.WriteString(pieces[rng.IntN(len(pieces))])
			} else {
				s.WriteString(strings.Repeat("x", rng.IntN(12)))
			}
		}
		s.WriteString(`"}`)
		compareCheckLine(t, []byte(s.String()))
	}
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

// TestStopMask: every pair of byte values at every pair of positions in a
// word; the lowest mark must be the first stop byte, and no mark without one.
func TestStopMask(t *testing.T) {
	isStop := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	var w [8]byte
	for c1 := range 256 {
		for c2 := range 256 {
			for p1 := range 8 {
				for p2 := p1 + 1; p2 < 8; p2++ {
					copy(w[:], "abcdefgh")
					w[p1], w[p2] = byte(c1), byte(c2)
					want := 8
					if isStop(byte(c2)) {
						want = p2
					}
					if isStop(byte(c1)) {
						want = p1
					}
					m := stopMask(binary.LittleEndian.Uint64(w[:]))
					if got := bits.TrailingZeros64(m) / 8; got != want {
						t.Fatalf("stopMask(%q): first stop at %d, want %d", w, got, want)
					}
				}
			}
		}
	}
}

// TestScanPlain checks the word-at-a-time scan against a byte loop on
// every offset of inputs with each kind of stop byte at every position.
func TestScanPlain(t *testing.T) {
	stops := []byte{'"', '\\', 0x00, 0x1f, 0x80, 0xa0, 0xa2, 0xdc, 0xe9, 0xff}
	plain := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz !#~\x7f 0123456789", 2))
	naive := func(b []byte, i int) int {
		for ; i < len(b); i++ {
			if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return i
	}
	for n := 0; n <= 72; n++ {
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
