package rollout

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGluedParts(t *testing.T) {
	const rec = `{"timestamp":"2026-05-05T20:17:08.555Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":\"echo \\\"}{\\\"\"}","call_id":"call_A7"}}`
	const rec2 = `{"timestamp":"2026-05-05T20:17:08.600Z","type":"event_msg","payload":{"type":"token_count","info":null}}`
	torn := `{"timestamp":"2026-05-05T20:17:08.148Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summ`
	for _, tc := range []struct {
		name string
		line string
		want [][2]int // nil: not glued
	}{
		{"torn then a record", torn + rec, [][2]int{{len(torn), len(torn) + len(rec)}}},
		{"torn then two records", torn + rec + " " + rec2, [][2]int{{len(torn), len(torn) + len(rec)}, {len(torn) + len(rec) + 1, len(torn) + len(rec) + 1 + len(rec2)}}},
		{"NUL padding then a record", "\x00\x00\x00" + rec, [][2]int{{3, 3 + len(rec)}}},
		{"trailing white space", torn + rec + "  ", [][2]int{{len(torn), len(torn) + len(rec)}}},
		// The torn bytes end on a complete payload object: not a record (no
		// timestamp), so it stays with the torn bytes.
		{"torn bytes ending on a payload", `{"timestamp":"x","type":"response_item","payload":{"type":"message","id":"msg_1"}` + rec,
			[][2]int{{len(`{"timestamp":"x","type":"response_item","payload":{"type":"message","id":"msg_1"}`), len(`{"timestamp":"x","type":"response_item","payload":{"type":"message","id":"msg_1"}`) + len(rec)}}},
		{"a record torn at its end", rec[:len(rec)-3], nil},
		{"objects only", rec + rec2, nil},
		{"no record at the end", torn + `{"type":"x"}`, nil},
		{"not an object at the end", torn + `"text"`, nil},
		{"garbage", "WARN codex_core::rollout: flush took 1200ms", nil},
		{"a lone brace", "}", nil},
		{"quotes that never open", strings.Repeat(`"}`, 1000), nil},
	} {
		if got := gluedParts([]byte(tc.line)); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: gluedParts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGluedShape: the reader classifies a glued line, terminated or not,
// and keeps concatenated and torn lines as they were.
func TestGluedShape(t *testing.T) {
	const rec = `{"timestamp":"2026-05-05T20:17:08.555Z","type":"event_msg","payload":{"type":"agent_message","message":"ok"}}`
	in := `{"timestamp":"2026-05-05T20:17:08.148Z","type":"response_it` + rec + "\n" + rec + rec + "\n" + `{"timestamp":"2026-05-05T20:17:08.148Z","type":"response_it` + rec
	rd := NewReader(strings.NewReader(in), DefaultMaxLineBytes)
	var got []string
	for {
		r, err := rd.Next()
		if err != nil {
			break
		}
		got = append(got, r.Shape.String())
	}
	want := []string{"glued", "concatenated", "glued"}
	if !cmp.Equal(got, want) {
		t.Errorf("shapes %v, want %v", got, want)
	}
}
