package reconstruct

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/rollout"
)

// TestParseMillisZ compares the fast path with time.Parse on the form
// Codex writes and on values around its limits.
func TestParseMillisZ(t *testing.T) {
	cases := []string{
		"2026-03-10T09:35:30.037Z", "2026-02-28T23:59:59.999Z", "2024-02-29T00:00:00.000Z", "2026-02-29T00:00:00.000Z",
		"2026-13-01T00:00:00.000Z", "2026-00-01T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "2026-01-31T24:00:00.000Z",
		"2026-01-31T23:60:00.000Z", "2026-01-31T23:59:60.000Z", "0000-01-01T00:00:00.000Z", "2026-1a-01T00:00:00.000Z",
		"2026-01-01T00:00:00.00xZ", "2026-01-01 00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-01-01T00:00:00.000z",
	}
	for y := 1999; y < 2102; y += 7 {
		for mo := 1; mo <= 12; mo++ {
			for d := 26; d <= 31; d++ {
				cases = append(cases, fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, d, (y+d)%24, (mo*7)%60, (d*3)%60, (y*d)%1000))
			}
		}
	}
	for _, c := range cases {
		want, werr := time.Parse(time.RFC3339Nano, c)
		got, ok := parseTimestamp(append([]byte{'"'}, append([]byte(c), '"')...))
		if ok != (werr == nil) || ok && !got.Equal(want) {
			t.Errorf("%s: got %v %v, time.Parse %v %v", c, got, ok, want, werr)
		}
		if fast, ok := parseMillisZ([]byte(c)); ok && (werr != nil || !fast.Equal(want)) {
			t.Errorf("%s: fast path %v, time.Parse %v %v", c, fast, want, werr)
		}
	}
}

// TestParseMillisZFast: every well-formed value takes the fast path.
func TestParseMillisZFast(t *testing.T) {
	for _, c := range []string{"2026-03-10T09:35:30.037Z", "1999-12-31T23:59:59.999Z", "2024-02-29T00:00:00.000Z", "2096-02-28T19:49:59.969Z"} {
		if _, ok := parseMillisZ([]byte(c)); !ok {
			t.Errorf("%s: not parsed by the fast path", c)
		}
	}
}

// TestTextPrefix: the prefix contextualContent judges is the start of what
// TrimLeft of the whole decoded text gives, escapes and white space
// included.
func TestTextPrefix(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, v := range []string{
		`"<environment_context>` + long + `"`, `"  \n\t\r\u0020\u000A <user_instructions>` + long + `"`,
		`"\u00e9\u00e9\u00e9\ud83d\ude00` + strings.Repeat(`\u00e9`, 200) + `"`, `""`, `"   "`, `"\"quoted\" text"`,
		`"` + strings.Repeat(" ", 3000) + `<Environment_Context>"`, `"\\n not a newline"`, `"\u0009\u000d` + strings.Repeat(`\n`, 500) + `ab"`,
		`42`, `"short"`, `"\u00e9` + strings.Repeat(`\ud83d\ude00`, 100) + `"`,
	} {
		whole := strings.TrimLeft(rollout.DecodeString([]byte(v)), " \t\r\n")
		got := textPrefix([]byte(v), 32)
		if !strings.HasPrefix(whole, got) || len(got) < min(32, len(whole)) {
			t.Errorf("%.40s: prefix %q, whole text starts %.40q", v, got, whole)
		}
	}
}
