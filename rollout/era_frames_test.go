package rollout

import (
	"strings"
	"testing"
)

// TestDetectEraFrames: frame logs are told apart from the rollout eras by
// their first object line.
func TestDetectEraFrames(t *testing.T) {
	for _, c := range []struct {
		line string
		want Era
	}{
		{`{"type":"agent_start"}`, EraFrames},
		{`{"type":"start","partial":{"role":"assistant","content":[]}}`, EraFrames},
		{`{"type":"text_delta","contentIndex":0,"delta":"Hi"}`, EraFrames},
		{`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hi"},"message":{}}`, EraFrames},
		// An unknown event type, recognised by its wrapper.
		{`{"type":"message_delta_v2","assistantMessageEvent":{"type":"x"}}`, EraFrames},
		// Rollouts: an envelope, even one whose type collides with a frame type.
		{`{"timestamp":"2026-01-01T00:00:00.000Z","type":"error","payload":{}}`, EraEnvelope},
		{`{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"x"}}`, EraEnvelope},
		{`{"id":"x","timestamp":"2025-06-01T00:00:00Z"}`, EraBare},
		{`{"type":"message","role":"user","content":[]}`, EraBare},
		{`{"kind":"text_delta"}`, EraUnknown},
	} {
		rd := NewReader(strings.NewReader(c.line+"\n"), 0)
		rec, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := DetectEra(rec); got != c.want {
			t.Errorf("%s: era %s, want %s", c.line, got, c.want)
		}
	}
}
