package reconstruct_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/reconstruct"
)

// section reads one section of a rule fixture.
func section(t *testing.T, path, name string) string {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	t.Fatalf("%s: no section %s", path, name)
	return ""
}

// TestDerivedTurns: a file without task_started (Codex before about 0.104)
// has its user turns at its user messages, as drop_last_n_user_turns counts
// them; Codex's own <environment_context> message is not one.
func TestDerivedTurns(t *testing.T) {
	const fx = "../fixtures/real/rollback-too-many-turns.v058.txtar"
	for _, tc := range []struct {
		section string
		want    []string // "line status rolled-back"
		history int      // live items after the replay
	}{
		// The rollback of 3 drops both turns: what is left is the prefix
		// (environment context; turn_context is not a history item).
		{"rollout.jsonl", []string{"4 completed true", "13 open true"}, 1},
		// The rollback of 1 drops the second turn only: the environment
		// context and the first turn's five items stay.
		{"clean.jsonl", []string{"4 completed false", "13 open true"}, 6},
	} {
		_, st := replay(t, section(t, fx, tc.section), reconstruct.Options{})
		var got []string
		for _, turn := range st.Turns {
			if !turn.Derived || !turn.User {
				t.Errorf("%s: turn at line %d: derived %v, user %v; want both", tc.section, turn.StartLine, turn.Derived, turn.User)
			}
			got = append(got, fmt.Sprintf("%d %s %v", turn.StartLine, turn.Status, turn.RolledBack))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: turns (-want +got):\n%s", tc.section, diff)
		}
		if st.History.Len() != tc.history {
			t.Errorf("%s: %d live items, want %d", tc.section, st.History.Len(), tc.history)
		}
	}
}

// TestTurnEventsEndDerivedTurns: once a task_started appears (a file
// resumed by a newer Codex) turns come from events, and the derived turn
// before it is closed, not reported unclosed.
func TestTurnEventsEndDerivedTurns(t *testing.T) {
	src := `{"timestamp":"2025-11-18T09:40:36.803Z","type":"session_meta","payload":{"id":"019a9656-691d-7ff3-890e-3e6678ed46d8","cli_version":"0.58.0"}}
{"timestamp":"2025-11-18T09:40:36.914Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]}}
{"timestamp":"2026-03-02T10:15:41.002Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t2"}}
{"timestamp":"2026-03-02T10:15:41.013Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}}
{"timestamp":"2026-03-02T10:15:47.402Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t2"}}
`
	_, st := replay(t, src, reconstruct.Options{})
	var got []string
	for _, turn := range st.Turns {
		got = append(got, fmt.Sprintf("%d %s derived=%v", turn.StartLine, turn.Status, turn.Derived))
	}
	want := []string{"2 completed derived=true", "3 completed derived=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// TestCurrentEventTypes: the record and event types of current Codex that
// do not change what a resume rebuilds (item_completed, token_usage_record,
// thread_settings_applied) leave the model history to the response items,
// and an item_completed UserMessage marks its turn as a user turn.
func TestCurrentEventTypes(t *testing.T) {
	const fx = "../fixtures/real/turn-prompt-not-in-history.v153.txtar"
	_, st := replay(t, section(t, fx, "clean.jsonl"), reconstruct.Options{})
	var types []string
	for it := range st.History.All() {
		types = append(types, it.Type)
	}
	want := []string{"message", "message", "message", "custom_tool_call", "custom_tool_call_output", "message"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if len(st.Turns) != 1 || !st.Turns[0].User || st.Turns[0].Status != "completed" {
		t.Errorf("turns %+v, want one completed user turn", st.Turns)
	}
	if st.UnknownTypes != 0 {
		t.Errorf("%d unknown line types, want 0", st.UnknownTypes)
	}
}

// TestLegacyCompactionReindexes: a compaction without replacement_history
// keeps only the prompts and adds the summary, so the id and call indexes
// are rebuilt: an output of a call it dropped is an orphan, not an answer
// to some other item (it used to index past the shorter history and fail
// the file), and Codex 0.48+ drops it before the request.
func TestLegacyCompactionReindexes(t *testing.T) {
	src := `{"timestamp":"2026-04-07T09:00:00.000Z","type":"session_meta","payload":{"id":"019d672b-8a97-7c26-8934-98579f95cd19","cli_version":"0.110.0"}}
{"timestamp":"2026-04-07T09:00:00.001Z","type":"response_item","payload":{"type":"message","id":"msg_019d672b-8ad0-72ca-8ae3-f0c3725f6a4e","role":"user","content":"hi"}}
{"timestamp":"2026-04-07T09:00:00.002Z","type":"response_item","payload":{"type":"function_call","id":"fc_019d672b-8ae6-712e-b609-98f014a6f28a","name":"shell","arguments":"{}","call_id":"call_1"}}
{"timestamp":"2026-04-07T09:00:00.003Z","type":"response_item","payload":{"type":"function_call_output","id":"fco_019d672b-8b01-799c-906d-8a21eacfa89b","call_id":"call_1","output":"ok"}}
{"timestamp":"2026-04-07T09:00:00.004Z","type":"compacted","payload":{"message":"summary"}}
{"timestamp":"2026-04-07T09:00:00.005Z","type":"response_item","payload":{"type":"function_call_output","id":"fco_019d672b-8b01-799c-906d-8a21eacfa89b","call_id":"call_1","output":"ok"}}
`
	var kinds []string
	st, err := reconstruct.Replay(strings.NewReader(src), reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
		switch o.Kind() {
		case reconstruct.ToolOrphanOutput, reconstruct.ItemDuplicateID:
			kinds = append(kinds, fmt.Sprintf("%d %T", o.Pos.Line, o.Evidence))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"6 reconstruct.ToolOrphanOutputEvidence"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
	if st.History.Len() != 2 || st.History.At(1).Index != reconstruct.SummaryIndex {
		t.Errorf("%d live items, want the prompt and the summary (the orphan output dropped)", st.History.Len())
	}
}

// TestLegacyCompactionKeeps: what Codex rebuilds from a compacted record
// without replacement_history (internal/testkit/conformance/testdata/*/compact-local): the
// initial context, the user prompts and the summary as a user message;
// before 0.55 one bridge message replaces the prompts and the summary.
func TestLegacyCompactionKeeps(t *testing.T) {
	body := `{"timestamp":"2026-04-07T09:00:00.001Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}}
{"timestamp":"2026-04-07T09:00:00.002Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]}}
{"timestamp":"2026-04-07T09:00:00.003Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}
{"timestamp":"2026-04-07T09:00:00.004Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}
{"timestamp":"2026-04-07T09:00:00.005Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}}
{"timestamp":"2026-04-07T09:00:00.006Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}}
{"timestamp":"2026-04-07T09:00:00.007Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2026-04-07T09:00:00.008Z","type":"compacted","payload":{"message":"summary"}}
`
	for _, tc := range []struct {
		version string
		lines   []int // lines of the kept items
		last    int   // Index of the synthesized item
	}{
		{"0.104.0", []int{2, 3, 7, 9}, reconstruct.SummaryIndex},
		{"0.55.0", []int{2, 3, 7, 9}, reconstruct.SummaryIndex},
		{"0.53.0", []int{2, 9}, reconstruct.BridgeIndex},
		{"0.40.0", []int{2, 9}, reconstruct.BridgeIndex},
	} {
		src := `{"timestamp":"2026-04-07T09:00:00.000Z","type":"session_meta","payload":{"id":"019d672b-8a97-7c26-8934-98579f95cd19","cli_version":"` + tc.version + `"}}` + "\n" + body
		st, err := reconstruct.Replay(strings.NewReader(src), reconstruct.ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var lines []int
		for it := range st.History.All() {
			lines = append(lines, it.Line)
		}
		if diff := cmp.Diff(tc.lines, lines); diff != "" {
			t.Errorf("%s: kept lines (-want +got):\n%s", tc.version, diff)
		}
		if n := st.History.Len(); n == 0 || st.History.At(n-1).Index != tc.last || !st.History.At(n-1).Synthesized() {
			t.Errorf("%s: last item %+v, want the synthesized index %d", tc.version, st.History.At(n-1), tc.last)
		}
	}
}

// TestUsageSliceTurnIDs: in a slice of a 0.153 file without task_started
// (a usage tool's copy), each turn_context comes before its turn's user
// message. The first turn was named after the next turn's turn_context
// (usage-example-007); each turn takes the turn_context before it, and the
// last one the id of its task_complete.
func TestUsageSliceTurnIDs(t *testing.T) {
	const fx = "../fixtures/real/tokens-total-decreased.v153-usage-slice.txtar"
	_, st := replay(t, section(t, fx, "clean.jsonl"), reconstruct.Options{})
	var got []string
	for _, turn := range st.Turns {
		got = append(got, fmt.Sprintf("%d %s %s", turn.StartLine, turn.ID, turn.Status))
	}
	want := []string{"3 usage-example-006 completed", "8 usage-example-007 completed", "13 usage-example-008 completed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// TestTurnIDFromEvents: a turn takes its id from its task_started; a
// turn_context naming the next turn does not rename the one still open,
// and a turn with no id of its own takes its closing event's.
func TestTurnIDFromEvents(t *testing.T) {
	src := `{"timestamp":"2026-09-05T09:30:00.000Z","type":"session_meta","payload":{"id":"019f1c02-4e50-7a61-8b72-9c8d7e6f5a40","cli_version":"0.153.4"}}
{"timestamp":"2026-09-05T09:30:00.100Z","type":"event_msg","payload":{"type":"task_started"}}
{"timestamp":"2026-09-05T09:30:00.200Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}
{"timestamp":"2026-09-05T09:30:00.300Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}
{"timestamp":"2026-09-05T09:30:00.400Z","type":"event_msg","payload":{"type":"task_started"}}
{"timestamp":"2026-09-05T09:30:00.500Z","type":"turn_context","payload":{"turn_id":"t3"}}
{"timestamp":"2026-09-05T09:30:00.600Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t3"}}
{"timestamp":"2026-09-05T09:30:00.700Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t3"}}
`
	_, st := replay(t, src, reconstruct.Options{})
	var got []string
	for _, turn := range st.Turns {
		got = append(got, fmt.Sprintf("%d %q %s", turn.StartLine, turn.ID, turn.Status))
	}
	want := []string{`2 "t1" completed`, `5 "" unclosed`, `7 "t3" completed`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// A rollback restores the token info the turn started with, also when a
// token count came after an earlier rollback: turns 2 and 3 start on the
// same counts, and the count after the rollback of turn 3 must not change
// what turn 2's start holds (the engine changes its token info in place
// only while no turn start holds it).
func TestRollbacksRestoreTokens(t *testing.T) {
	b := newRB()
	b.start(1, 258400)
	b.user(1, "one")
	b.tokens(10000, 258400)
	b.complete(1)
	b.start(2, 258400)
	b.user(2, "two")
	b.complete(2)
	b.start(3, 258400)
	b.user(3, "three")
	b.tokens(30000, 258400)
	b.complete(3)
	b.add("event_msg", `{"type":"thread_rolled_back","num_turns":1}`)
	b.tokens(50000, 258400)
	b.add("event_msg", `{"type":"thread_rolled_back","num_turns":1}`)
	_, st := replay(t, b.String(), reconstruct.Options{})
	if st.Tokens == nil || st.Tokens.Fill != 10000 {
		t.Fatalf("Tokens = %+v, want the fill turn 2 started with, 10000", st.Tokens)
	}
}
