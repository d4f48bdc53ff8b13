package reconstruct_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/reconstruct"
)

// TestPairingByCallID: Codex pairs calls and outputs by call_id wherever
// they are (internal/testkit/conformance corrupt/output-before-call and
// corrupt/duplicate-turn): an output before its call is sent where it is
// and the call gets no "aborted" output; a call and output written twice
// are both sent, each copy answered.
func TestPairingByCallID(t *testing.T) {
	const meta = `{"timestamp":"2026-04-07T09:00:00.000Z","type":"session_meta","payload":{"id":"019d672b-8a97-7c26-8934-98579f95cd19","cli_version":"0.171.0"}}`
	prompt := `{"timestamp":"2026-04-07T09:00:00.001Z","type":"response_item","payload":{"type":"message","role":"user","content":"hi"}}`
	call := `{"timestamp":"2026-04-07T09:00:00.002Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}}`
	output := `{"timestamp":"2026-04-07T09:00:00.003Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"ok"}}`
	for _, tc := range []struct {
		name  string
		lines []string
		items []string // type:output of each item sent
		obs   []string
	}{
		{"output before call", []string{meta, prompt, output, call},
			[]string{"message", "function_call_output:ok", "function_call"},
			[]string{"3 tool/orphan-output call_line 4"}},
		{"turn written twice", []string{meta, prompt, call, output, prompt, call, output},
			[]string{"message", "function_call", "function_call_output:ok", "message", "function_call", "function_call_output:ok"}, nil},
		{"orphan output", []string{meta, prompt, output},
			[]string{"message"}, []string{"3 tool/orphan-output call_line 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obs []string
			st, err := reconstruct.Replay(strings.NewReader(strings.Join(tc.lines, "\n")+"\n"), reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
				switch e := o.Evidence.(type) {
				case reconstruct.ToolOrphanOutputEvidence:
					obs = append(obs, fmt.Sprintf("%d tool/orphan-output call_line %d", o.Pos.Line, e.CallLine))
				case reconstruct.ToolOrphanCallEvidence:
					obs = append(obs, fmt.Sprintf("%d tool/orphan-call", o.Pos.Line))
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			var items []string
			for it := range st.History.All() {
				s := it.Type
				if it.Index == reconstruct.AbortedIndex {
					s += ":aborted"
				} else if strings.HasSuffix(it.Type, "_output") {
					s += ":ok"
				}
				items = append(items, s)
			}
			if diff := cmp.Diff(tc.items, items); diff != "" {
				t.Errorf("items sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.obs, obs); diff != "" {
				t.Errorf("observations (-want +got):\n%s", diff)
			}
		})
	}
}
