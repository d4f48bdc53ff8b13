package reconstruct

import (
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/rollout"
)

// TestTurnContextSettings: the settings resume restores are read from a
// turn_context's top-level members, each the first of its name (escaped
// names too), absent and null members becoming null or nothing.
func TestTurnContextSettings(t *testing.T) {
	const meta = `{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019d672b-8ad0-72ca-8ae3-f0c3725f6a4e","cli_version":"0.171.0"}}` + "\n"
	line := func(payload string) string {
		return `{"timestamp":"2026-03-10T09:35:31.000Z","type":"turn_context","payload":` + payload + "}\n"
	}
	for _, tc := range []struct {
		name, payload       string
		previous            string // "" for no settings
		multiAgent, started string
		contextTurn         string
	}{
		{"plain", `{"turn_id":"t1","model":"gpt-5","comp_hash":"abc","realtime_active":false,"multi_agent_version":2}`,
			`{"model":"gpt-5","comp_hash":"abc","realtime_active":false}`, `2`, `"t1"`, "t1"},
		{"absent and null", `{"model":{"name":"m"},"comp_hash":null,"multi_agent_version":null}`,
			`{"model":{"name":"m"},"comp_hash":null,"realtime_active":null}`, "", "", ""},
		{"first of repeated", `{"model":"a","model":"b","turn_id":"t1","turn_id":"t2"}`,
			`{"model":"a","comp_hash":null,"realtime_active":null}`, "", `"t1"`, "t1"},
		{"escaped name", `{"mod\u0065l":"x", "turn_id" : "t\u0031"}`,
			`{"model":"x","comp_hash":null,"realtime_active":null}`, "", `"t\u0031"`, "t1"},
		{"no model", `{"turn_id":"t9"}`, "", "", "", "t9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(Options{}, nil)
			st, err := replayEngine(e, meta+line(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.contextTurnID; got != tc.contextTurn {
				t.Errorf("turn id %q, want %q", got, tc.contextTurn)
			}
			s := st.Settings
			if tc.previous == "" {
				if s != nil {
					t.Errorf("settings %+v, want none", s)
				}
				return
			}
			if s == nil {
				t.Fatal("no settings")
			}
			if string(s.Previous) != tc.previous || string(s.MultiAgentVersion) != tc.multiAgent || string(s.LastStartedTurnID) != tc.started {
				t.Errorf("settings %s, %s, %s; want %s, %s, %s", s.Previous, s.MultiAgentVersion, s.LastStartedTurnID, tc.previous, tc.multiAgent, tc.started)
			}
		})
	}
}

// replayEngine feeds the lines of src to e and returns its state before
// Finish (which detaches it).
func replayEngine(e *engine, src string) (*State, error) {
	rd := rollout.NewReader(strings.NewReader(src), 0)
	defer rd.Release()
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		e.Feed(rec)
	}
	return &e.st, nil
}
