package checks

import (
	"strings"
	"testing"
)

// TestHandoffEdits: each handoff action on the bytes of a record line,
// every other byte kept.
func TestHandoffEdits(t *testing.T) {
	actions := map[string]handoffAction{
		"handoff/oversized-not-deferred": setDeferredTrue,
		"handoff/lost-deferred":          setDeferredTrue,
		"handoff/stale-deferred":         removeDeferred,
		"handoff/duplicate-deferred":     setSuperseded,
	}
	const env = `{"timestamp":"2026-04-02T10:00:00.000Z","type":"context_handoff","payload":`
	tests := []struct {
		name, rule, payload, want, err string
		raw                            string // the whole line, when not env+payload+"}"
	}{
		{name: "insert after status", rule: "handoff/oversized-not-deferred",
			payload: `{"id":"hof_a","status":"ready","history":{"tokens":5}}`,
			want:    `{"id":"hof_a","status":"ready","deferred":true,"history":{"tokens":5}}`},
		{name: "replace false", rule: "handoff/oversized-not-deferred",
			payload: `{"id":"hof_a","deferred":false,"status":"ready"}`,
			want:    `{"id":"hof_a","deferred":true,"status":"ready"}`},
		{name: "no status: at the end", rule: "handoff/lost-deferred",
			payload: `{"id":"hof_a","history":{"tokens":5},"delivery":{"status":"pending"}}`,
			want:    `{"id":"hof_a","history":{"tokens":5},"delivery":{"status":"pending"},"deferred":true}`},
		{name: "top-level status, not the delivery's", rule: "handoff/lost-deferred",
			payload: `{"id":"hof_a","delivery":{"status":"pending"},"status":"ready"}`,
			want:    `{"id":"hof_a","delivery":{"status":"pending"},"status":"ready","deferred":true}`},
		{name: "nested deferred is not the marker", rule: "handoff/oversized-not-deferred",
			payload: `{"id":"hof_a","status":"ready","history":{"deferred":true}}`,
			want:    `{"id":"hof_a","status":"ready","deferred":true,"history":{"deferred":true}}`},
		{name: "spaced JSON keeps its spacing", rule: "handoff/oversized-not-deferred",
			payload: `{ "id": "hof_a", "status": "ready" , "note": "caf\u00e9 \"x\"" }`,
			want:    `{ "id": "hof_a", "status": "ready","deferred":true , "note": "caf\u00e9 \"x\"" }`},
		{name: "remove in the middle", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a","status":"ready","deferred":true,"delivery":{"status":"inline"}}`,
			want:    `{"id":"hof_a","status":"ready","delivery":{"status":"inline"}}`},
		{name: "remove the first member", rule: "handoff/stale-deferred",
			payload: `{ "deferred": true,  "id": "hof_a"}`,
			want:    `{ "id": "hof_a"}`},
		{name: "remove the last member", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a", "status":"ready" , "deferred" : true }`,
			want:    `{"id":"hof_a", "status":"ready" }`},
		{name: "supersede", rule: "handoff/duplicate-deferred",
			payload: `{"id":"hof_a","status":"ready","deferred":true}`,
			want:    `{"id":"hof_a","status":"superseded","deferred":true}`},
		{name: "concatenated: the handoff is the second object", rule: "handoff/duplicate-deferred",
			raw:  `{"type":"event_msg","payload":{"type":"x","status":"ready"}} ` + env + `{"id":"hof_a","status":"ready"}}`,
			want: `{"type":"event_msg","payload":{"type":"x","status":"ready"}} ` + env + `{"id":"hof_a","status":"superseded"}}`},
		{name: "concatenated: the later record of the id wins", rule: "handoff/stale-deferred",
			raw:  env + `{"id":"hof_a","deferred":true,"status":"ready"}}` + env + `{"id":"hof_a","status":"ready","deferred":true}}`,
			want: env + `{"id":"hof_a","deferred":true,"status":"ready"}}` + env + `{"id":"hof_a","status":"ready"}}`},
		{name: "another handoff's line", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_b","deferred":true}`, err: "no context_handoff record with that id"},
		{name: "not a handoff line", rule: "handoff/stale-deferred",
			raw: `{"type":"event_msg","payload":{"id":"hof_a","deferred":true}}`, err: "no context_handoff record with that id"},
		{name: "not JSON", rule: "handoff/stale-deferred", raw: `hello`, err: "not a sequence of JSON objects"},
		{name: "already deferred", rule: "handoff/lost-deferred",
			payload: `{"id":"hof_a","status":"ready","deferred":true}`, err: "already deferred"},
		{name: "two markers", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a","deferred":true,"deferred":false}`, err: `2 "deferred" members`},
		{name: "nothing to clear", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a","status":"ready"}`, err: "no deferred member"},
		{name: "no status to supersede", rule: "handoff/duplicate-deferred",
			payload: `{"id":"hof_a"}`, err: "no status"},
		{name: "already superseded", rule: "handoff/duplicate-deferred",
			payload: `{"id":"hof_a","status":"superseded"}`, err: "already superseded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw
			if raw == "" {
				raw = env + tt.payload + "}"
			}
			want := tt.want
			if tt.raw == "" {
				want = env + tt.want + "}"
			}
			start, end, repl, err := planHandoffEdit([]byte(raw), "hof_a", actions[tt.rule])
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := raw[:start] + string(repl) + raw[end:]
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}
