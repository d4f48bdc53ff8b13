package repair_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
)

// allocationRollout is a 0.171 paginated rollout: meta, a turn's start
// and prompt, extra (lines numbered by the caller), then an assistant
// message, a compaction checkpoint whose resume_metadata says
// next_item_ordinal next, an assistant message and the turn's end,
// numbered tail[0..3].
func allocationRollout(tail [4]int, next int, extra string) string {
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-11-20T09:35:30.037Z","ordinal":0,"type":"session_meta","payload":{"id":"01a2365a-93f3-70f3-9efb-c05c7fe1501f","timestamp":"2026-11-20T09:35:29.981Z","cwd":"/home/dev/ledger","originator":"codex_cli_rs","cli_version":"0.171.0","source":"cli","model_provider":"openai","history_mode":"paginated","context_window":{"window_id":"01a2365a-93fa-74c3-a2f4-6d6509152312"}}}` + "\n")
	b.WriteString(`{"timestamp":"2026-11-20T09:35:30.074Z","ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":"01a2365a-944c-7a13-9c10-63469113a9c7","model_context_window":258400}}` + "\n")
	b.WriteString(`{"timestamp":"2026-11-20T09:35:30.111Z","ordinal":2,"type":"response_item","payload":{"type":"message","id":"msg_01a2365a-94e2-7fe1-8284-2ddb65b71dd5","role":"user","content":[{"type":"input_text","text":"Which migrations are pending?"}]}}` + "\n")
	b.WriteString(extra)
	fmt.Fprintf(&b, `{"timestamp":"2026-11-20T09:35:30.148Z","ordinal":%d,"type":"response_item","payload":{"type":"message","id":"msg_01a2365a-9600-7000-8000-00000000000d","role":"assistant","content":[{"type":"output_text","text":"Looking."}]}}`+"\n", tail[0])
	fmt.Fprintf(&b, `{"timestamp":"2026-11-20T09:35:30.185Z","ordinal":%d,"type":"compacted","payload":{"message":"Summary.","replacement_history":[{"type":"message","id":"msg_01a2365a-94e2-7fe1-8284-2ddb65b71dd5","role":"user","content":[{"type":"input_text","text":"Which migrations are pending?"}]}],"window_number":1,"first_window_id":"01a2365a-93fa-74c3-a2f4-6d6509152312","previous_window_id":"01a2365a-93fa-74c3-a2f4-6d6509152312","window_id":"01a2365a-9964-73e3-8889-0c84ed506f2c","resume_metadata":{"next_item_ordinal":%d}}}`+"\n", tail[1], next)
	fmt.Fprintf(&b, `{"timestamp":"2026-11-20T09:35:30.222Z","ordinal":%d,"type":"response_item","payload":{"type":"message","id":"msg_01a2365a-9600-7000-8000-00000000000e","role":"assistant","content":[{"type":"output_text","text":"0003 is pending."}]}}`+"\n", tail[2])
	fmt.Fprintf(&b, `{"timestamp":"2026-11-20T09:35:30.259Z","ordinal":%d,"type":"event_msg","payload":{"type":"task_complete","turn_id":"01a2365a-944c-7a13-9c10-63469113a9c7","last_agent_message":"Done."}}`+"\n", tail[3])
	return b.String()
}

func TestRenumberingKeepsNextItemOrdinal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		refused bool
	}{
		// Ordinal 2 twice (lines 3 and 4): renumbering from line 4 would
		// move the record after the checkpoint (ordinal 4, which
		// next_item_ordinal names) to 5.
		{"the record after the checkpoint", allocationRollout([4]int{2, 3, 4, 5}, 4, ""), true},
		// An async compaction's checkpoint that leaves ordinal 2 on: the
		// renumbering changes records it covers.
		{"a record the checkpoint leaves on", allocationRollout([4]int{2, 3, 4, 5}, 2, ""), true},
		// Ordinal 5 twice after the checkpoint: renumbering starts after
		// what it names.
		{"after the checkpoint", allocationRollout([4]int{3, 4, 5, 5}, 5, ""), false},
		// A checkpoint past the next record (ordinal/next-item in the
		// input) that the renumbering makes right.
		{"a checkpoint past the next record", allocationRollout([4]int{2, 3, 4, 5}, 5, ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "rollout.jsonl")
			in := []byte(tt.input)
			if err := os.WriteFile(path, in, 0o600); err != nil {
				t.Fatal(err)
			}
			o, r, err := writeInPlace(path, nil)
			if err != nil && r == nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if tt.refused {
				if r == nil || r.Kind != inplace.Worse || !strings.Contains(r.Error(), "next_item_ordinal") {
					t.Fatalf("refusal %v, want one naming next_item_ordinal", r)
				}
				if !bytes.Equal(after, in) {
					t.Errorf("a refused repair changed the file")
				}
				return
			}
			if r != nil || !o.Wrote {
				t.Fatalf("refusal %v, wrote %v: want the renumbering written", r, o.Wrote)
			}
		})
	}
}

func TestNoDerivedIDsBesideIDAllocation(t *testing.T) {
	t.Parallel()
	// An assistant message without id in a paginated file (item/missing-id,
	// whose fix derives one), with and without an id_allocation record.
	noID := `{"timestamp":"2026-11-20T09:35:30.120Z","ordinal":3,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]}}` + "\n"
	alloc := `{"timestamp":"2026-11-20T09:35:30.121Z","ordinal":4,"type":"id_allocation","payload":{"next":"opaque"}}` + "\n"
	for _, tt := range []struct {
		name    string
		extra   string
		tail    [4]int
		refused bool
	}{
		{"id_allocation present", noID + alloc, [4]int{5, 6, 7, 8}, true},
		{"no id_allocation", noID, [4]int{4, 5, 6, 7}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			input := allocationRollout(tt.tail, tt.tail[2], tt.extra)
			path := filepath.Join(t.TempDir(), "rollout.jsonl")
			if err := os.WriteFile(path, []byte(input), 0o600); err != nil {
				t.Fatal(err)
			}
			o, r, err := writeInPlace(path, nil)
			if err != nil && r == nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if tt.refused {
				if r == nil || !strings.Contains(r.Error(), "id_allocation, line 5") {
					t.Fatalf("refusal %v, want one naming the id_allocation line", r)
				}
				if string(after) != input {
					t.Errorf("a refused repair changed the file")
				}
				return
			}
			if r != nil || !o.Wrote || !strings.Contains(string(after), `"id":"msg_`) || string(after) == input {
				t.Fatalf("refusal %v, wrote %v: want the id derived and written", r, o.Wrote)
			}
		})
	}
}
