package report

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// shortOracle is the plan's rendering of a value as the strings functions
// say it: invalid UTF-8 replaced, line breaks and tabs escaped, cut after
// 60 runes (or when the value was kept truncated).
func shortOracle(b []byte, n int) string {
	if len(b) == 0 {
		return "(none)"
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	if utf8.RuneCountInString(s) > 60 || n > len(b) {
		rs := []rune(s)
		s = string(rs[:min(len(rs), 60)]) + "…"
	}
	return s
}

func TestAppendShort(t *testing.T) {
	cases := [][]byte{
		nil, []byte(`"x"`), []byte(strings.Repeat("a", 60)), []byte(strings.Repeat("a", 61)),
		[]byte(strings.Repeat("é", 59) + "\n"), []byte(strings.Repeat("é", 60) + "\n"),
		[]byte("a\xff\xfe\xfdb\xef\xbf\xbd\xff"), []byte("\t\r\n日本\x00"),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "日", "\n", "\r", "\t", "\xff", "\xe6", "\xef\xbf\xbd", `"`, "\x1b"}
	for range 2000 {
		var b []byte
		for range rng.IntN(80) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		cases = append(cases, b)
	}
	for _, b := range cases {
		for _, n := range []int{len(b), len(b) + 1} {
			if got, want := string(appendShort([]byte("> "), b, n)), "> "+shortOracle(b, n); got != want {
				t.Fatalf("appendShort(%q, %d) = %q, want %q", b, n, got, want)
			}
		}
	}
}

// TestRepairReportValuesAreUTF8: a before/after value with invalid UTF-8
// (an id holding a stray byte) was copied into --report as it was; the
// report must stay valid UTF-8 (issue 11).
func TestRepairReportValuesAreUTF8(t *testing.T) {
	for _, v := range []string{"\"fc_\xff\xfe\"", "\"ok\"", "12", "\"a\xc3\""} {
		got := jsonValue([]byte(v), len(v), true)
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Errorf("jsonValue(%q) = %q: not valid UTF-8 JSON", v, got)
		}
	}
}
