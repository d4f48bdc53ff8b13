package reconstruct_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/reconstruct"
)

// An open turn's unanswered call, as in fixtures/rules/tool-orphan-call.live.txtar.
const openCall = `{"timestamp":"2026-08-12T00:00:00.037Z","type":"session_meta","payload":{"id":"019e2b7c-4d10-7a21-9c3e-5b6a7c8d9e02","cli_version":"0.147.0"}}
{"timestamp":"2026-08-12T00:00:00.074Z","type":"event_msg","payload":{"type":"task_started","turn_id":"019e2b7c-5000-7000-8000-000000000002"}}
{"timestamp":"2026-08-12T00:00:00.111Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"wait"}]}}
{"timestamp":"2026-08-12T00:00:00.185Z","type":"response_item","payload":{"type":"function_call","name":"wait","arguments":"{}","call_id":"call_w1"}}
`

// State.Clock and State.Continues say what a replay's result depended on
// besides the file (verify --since reads such files again).
func TestStateDependsOn(t *testing.T) {
	now := time.Date(2026, 8, 12, 0, 2, 0, 0, time.UTC)
	replay := func(src string, o reconstruct.ReplayOptions) *reconstruct.State {
		t.Helper()
		st, err := reconstruct.Replay(strings.NewReader(src), o)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := replay(openCall, reconstruct.ReplayOptions{Options: reconstruct.Options{Now: now}}); !st.Clock || st.Continues {
		t.Errorf("an open turn's unanswered call judged at a known time: Clock %v Continues %v, want true false", st.Clock, st.Continues)
	}
	if st := replay(openCall, reconstruct.ReplayOptions{}); st.Clock {
		t.Errorf("judged without a time: Clock set")
	}
	closed := openCall + `{"timestamp":"2026-08-12T00:00:00.222Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_w1","output":"ok"}}` + "\n"
	if st := replay(closed, reconstruct.ReplayOptions{Options: reconstruct.Options{Now: now}}); st.Clock {
		t.Errorf("every call answered: Clock set")
	}

	fork := strings.Replace(openCall, `"cli_version":"0.147.0"}`,
		`"cli_version":"0.147.0","history_mode":"paginated","history_base":{"rollout_id":"019e2b7c-4d10-7a21-9c3e-5b6a7c8d9e01","end_ordinal_exclusive":3,"end_byte_offset":100}}`, 1)
	asked := false
	ancestry := func() *reconstruct.Ancestry { asked = true; return nil }
	if st := replay(fork, reconstruct.ReplayOptions{Ancestry: ancestry}); !st.Continues || !asked {
		t.Errorf("a file with a history_base: Continues %v (ancestry asked %v), want true", st.Continues, asked)
	}
	if st := replay(openCall, reconstruct.ReplayOptions{Ancestry: ancestry}); st.Continues {
		t.Errorf("a file without a history_base: Continues set")
	}
}
