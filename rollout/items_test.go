package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestItemPrefix is the table of format.md §4.
func TestItemPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, prefix string
		ok          bool
	}{
		{"message", "msg", true},
		{"agent_message", "amsg", true},
		{"reasoning", "rs", true},
		{"local_shell_call", "lsh", true},
		{"function_call", "fc", true},
		{"function_call_output", "fco", true},
		{"custom_tool_call", "ctc", true},
		{"custom_tool_call_output", "ctco", true},
		{"tool_search_call", "tsc", true},
		{"tool_search_output", "tso", true},
		{"web_search_call", "ws", true},
		{"image_generation_call", "ig", true},
		{"compaction", "cmp", true},
		{"context_compaction", "cmp", true},
		{"ghost_snapshot", "", false},
		{"something_new", "", false},
		{"", "", false},
		{"Message", "", false},
	}
	for _, tt := range tests {
		p, ok := ItemPrefix(tt.typ)
		if p != tt.prefix || ok != tt.ok {
			t.Errorf("ItemPrefix(%q) = %q, %v; want %q, %v", tt.typ, p, ok, tt.prefix, tt.ok)
		}
	}
}

func TestSplitID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id, prefix, rest string
		ok               bool
	}{
		{"msg_019cae52-6a12-7e02-8f00-000000000002", "msg", "019cae52-6a12-7e02-8f00-000000000002", true},
		{"rs_68b3", "rs", "68b3", true},
		{"a_b_c", "a", "b_c", true},
		{"_abc", "", "", false},
		{"msg_", "", "", false},
		{"_", "", "", false},
		{"msg", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		p, r, ok := SplitID(tt.id)
		if p != tt.prefix || r != tt.rest || ok != tt.ok {
			t.Errorf("SplitID(%q) = %q, %q, %v; want %q, %q, %v", tt.id, p, r, ok, tt.prefix, tt.rest, tt.ok)
		}
	}
}

func TestToolPairs(t *testing.T) {
	t.Parallel()
	for call, out := range map[string]string{
		"function_call":    "function_call_output",
		"custom_tool_call": "custom_tool_call_output",
		"local_shell_call": "function_call_output",
		"tool_search_call": "tool_search_output",
	} {
		if !IsToolCall(call) || OutputTypeFor(call) != out || !IsToolOutput(out) {
			t.Errorf("%s -> %s: IsToolCall %v OutputTypeFor %q IsToolOutput %v", call, out, IsToolCall(call), OutputTypeFor(call), IsToolOutput(out))
		}
		if IsToolOutput(call) || IsToolCall(out) {
			t.Errorf("%s/%s classified the wrong way round", call, out)
		}
	}
	for _, typ := range []string{"message", "reasoning", "web_search_call", "image_generation_call"} {
		if IsToolCall(typ) || IsToolOutput(typ) {
			t.Errorf("%s is not a tool call or output", typ)
		}
	}
}

func TestKnownLineType(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"session_meta", "response_item", "compacted", "turn_context", "event_msg",
		"world_state", "inter_agent_communication", "inter_agent_communication_metadata",
		"token_usage_record", "context_handoff", "security_risk_score", "retained_context", "realtime_item",
		"dynamic_tools_updated", "id_allocation"} {
		if !KnownLineType(typ) {
			t.Errorf("%s should be known (format.md §2)", typ)
		}
	}
	for _, typ := range []string{"", "message", "Session_meta", "event", "dynamic_tools", "id_allocations"} {
		if KnownLineType(typ) {
			t.Errorf("%q should be unknown", typ)
		}
	}
}

func TestParseUUIDv7(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s       string
		wantErr string // substring; "" = valid
		want    time.Time
	}{
		// 0x019cae526a12 ms since the epoch.
		{"019cae52-6a12-7e02-8f00-000000000002", "", time.UnixMilli(0x019cae526a12).UTC()},
		{"01a07a18-2f55-78c3-9976-e71905ebb698", "", time.UnixMilli(0x01a07a182f55).UTC()},
		{"00000000-0000-7000-8000-000000000000", "", time.UnixMilli(0).UTC()},
		{"5973b6c0-94b8-487b-a530-2aeb6098ae0e", "version 4", time.Time{}},
		{"019cae52-6a12-7e02-cf00-000000000002", "variant", time.Time{}}, // variant 110 (Microsoft)
		{"019cae52-6a12-7e02-0f00-000000000002", "variant", time.Time{}}, // variant 0 (NCS)
		{"019cae526a127e028f00000000000002", "hyphenated", time.Time{}},
		{"019cae52-6a12-7e02-8f00-00000000000g", "not a UUID", time.Time{}},
		{"", "hyphenated", time.Time{}},
	}
	for _, tt := range tests {
		got, err := ParseUUIDv7(tt.s)
		if tt.wantErr == "" {
			if err != nil || !got.Equal(tt.want) {
				t.Errorf("ParseUUIDv7(%q) = %v, %v; want %v", tt.s, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseUUIDv7(%q) error %v, want one mentioning %q", tt.s, err, tt.wantErr)
		}
	}
}

// checkV7 asserts the RFC 9562 layout by hand, independently of the parser.
func checkV7(t *testing.T, s string, ms int64) {
	t.Helper()
	if len(s) != 36 || s != strings.ToLower(s) || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		t.Fatalf("%q is not a lower-case hyphenated UUID", s)
	}
	if s[14] != '7' {
		t.Errorf("%q: version nibble %c, want 7", s, s[14])
	}
	if !strings.ContainsRune("89ab", rune(s[19])) {
		t.Errorf("%q: variant nibble %c, want 10xx (8, 9, a or b)", s, s[19])
	}
	hexMS := strings.ReplaceAll(s[:13], "-", "")
	var got int64
	for _, c := range hexMS {
		got = got*16 + int64(strings.IndexRune("0123456789abcdef", c))
	}
	if got != ms {
		t.Errorf("%q: timestamp %d, want %d", s, got, ms)
	}
	tm, err := ParseUUIDv7(s)
	if err != nil || tm.UnixMilli() != ms {
		t.Errorf("ParseUUIDv7(%q) = %v, %v; want %d ms", s, tm, err, ms)
	}
}

func TestNewUUIDv7(t *testing.T) {
	t.Parallel()
	ms := time.Date(2026, 3, 2, 10, 15, 41, 13e6, time.UTC).UnixMilli()
	var ones [10]byte
	for i := range ones {
		ones[i] = 0xff
	}
	for _, r := range [][10]byte{{}, ones, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}} {
		s := NewUUIDv7(ms, r)
		checkV7(t, s, ms)
	}
	if got := NewUUIDv7(ms, [10]byte{}); got != "019cae0b-e4d5-7000-8000-000000000000" {
		t.Errorf("NewUUIDv7(zero randomness) = %s", got)
	}
	if got := NewUUIDv7(ms, ones); got != "019cae0b-e4d5-7fff-bfff-ffffffffffff" {
		t.Errorf("NewUUIDv7(all ones) = %s", got)
	}
	checkV7(t, NewUUIDv7(0, ones), 0)
	checkV7(t, NewUUIDv7(1<<48-1, ones), 1<<48-1)
}

func TestDerivedUUIDv7(t *testing.T) {
	t.Parallel()
	const thread = "019cae52-3c1a-7b40-9d2e-5f1a2b3c4d5e"
	ms := time.Date(2026, 3, 2, 10, 15, 44, 912e6, time.UTC).UnixMilli()
	seen := map[string]string{}
	for line := 1; line <= 30; line++ {
		for item := -1; item <= 5; item++ {
			id := DerivedUUIDv7(ms, thread, line, item)
			checkV7(t, id, ms)
			if again := DerivedUUIDv7(ms, thread, line, item); again != id {
				t.Fatalf("(%d,%d): %s then %s: not deterministic", line, item, id, again)
			}
			if prev, dup := seen[id]; dup {
				t.Fatalf("(%d,%d) gives %s, already given to %s", line, item, id, prev)
			}
			seen[id] = fmt.Sprintf("(%d,%d)", line, item)
		}
	}
	a := DerivedUUIDv7(ms, thread, 9, 0)
	if b := DerivedUUIDv7(ms, "01a07a18-2f55-78c3-9976-e71905ebb698", 9, 0); a == b {
		t.Errorf("two threads derive the same id %s", a)
	}
	if b := DerivedUUIDv7(ms+1, thread, 9, 0); a[15:] != b[15:] || a == b {
		t.Errorf("only the timestamp should change with the time: %s vs %s", a, b)
	}
}
