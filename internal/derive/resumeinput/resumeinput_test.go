package resumeinput

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

const (
	threadID = "019cd719-fabd-7808-8020-00009e3779b2"
	turnID   = "019cd71a-25c8-75e6-805e-0001daa66d14"
)

func meta(version string) string {
	return `{"timestamp":"2026-03-10T09:35:30.000Z","type":"session_meta","payload":{"id":"` + threadID +
		`","timestamp":"2026-03-10T09:35:29.981Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"` + version + `","source":"cli"}}`
}

func item(payload string) string {
	return `{"timestamp":"2026-03-10T09:35:41.000Z","type":"response_item","payload":` + payload + `}`
}

// input replays the lines as Codex version would resume them and returns
// the input items.
func input(t *testing.T, resumeAs string, lines ...string) []Item {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-2026-03-10T09-35-30-"+threadID+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{Options: reconstruct.Options{ResumeVersion: resumeAs}})
	if err != nil {
		t.Fatal(err)
	}
	items, err := Items(st, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// same fails unless the items are the JSON values want, in order.
func same(t *testing.T, got []Item, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d items, want %d:\n%s", len(got), len(want), Raws(got))
	}
	for i := range want {
		var g, w any
		if err := json.Unmarshal(got[i].Raw, &g); err != nil {
			t.Fatalf("item %d is not JSON: %s", i, got[i].Raw)
		}
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("item %d:\n got %s\nwant %s", i, got[i].Raw, want[i])
		}
	}
}

const (
	prompt     = `{"type":"message","id":"msg_019cd71a-25ca-73c4-809c-000317156076","role":"user","content":[{"type":"input_text","text":"list the files"}],"internal_chat_message_metadata_passthrough":{"turn_id":"` + turnID + `"}}`
	promptSent = `{"type":"message","id":"msg_019cd71a-25ca-73c4-809c-000317156076","role":"user","content":[{"type":"input_text","text":"list the files"}]}`
	call       = `{"type":"function_call","id":"fc_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}`
)

// Codex keeps the passthrough metadata in the file only; from 0.142 it
// sends item ids, before it none.
func TestSentFields(t *testing.T) {
	lines := []string{meta("0.171.0"), item(prompt)}
	same(t, input(t, "", lines...), promptSent)
	same(t, input(t, "0.58.0", lines...),
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}`)
}

// From 0.145 an empty or unprefixed id is left out, a prefixed one sent;
// 0.142 to 0.145 send no ids unless the item_ids feature is on, which
// the CLI turned on by default in 0.146.
func TestBadIDs(t *testing.T) {
	unprefixed := `{"type":"message","id":"019cd71a-25ca-73c4-809c-000317156076","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	noID := `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	lines := []string{meta("0.171.0"), item(unprefixed), item(prompt)}
	same(t, input(t, "", lines...), noID, promptSent)
	same(t, input(t, "0.145.0", lines...), noID,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}`)
}

// A call without an output gets an "aborted" output of its own kind
// right after it; a git snapshot stays out of the request.
func TestAbortedAndHidden(t *testing.T) {
	got := input(t, "", meta("0.171.0"), item(prompt), item(call),
		item(`{"type":"ghost_snapshot","ghost_commit":{"id":"abc"}}`))
	same(t, got, promptSent, call, `{"type":"function_call_output","call_id":"call_1","output":"aborted"}`)
	if !got[2].From.Synthesized() || got[2].From.Line != 3 {
		t.Errorf("the aborted output is not marked as Codex's own, at its call's line: %+v", got[2].From)
	}
}

// A compaction without replacement_history resumes as the prompts and
// the summary as a user message; before 0.55 as one bridge message
// holding both.
func TestLegacyCompaction(t *testing.T) {
	p1 := `{"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]}`
	answer := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}`
	p2 := `{"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}`
	compacted := `{"timestamp":"2026-03-10T09:36:00.000Z","type":"compacted","payload":{"message":"SUMMARY"}}`
	lines := func(v string) []string { return []string{meta(v), item(p1), item(answer), item(p2), compacted} }
	same(t, input(t, "", lines("0.58.0")...), p1, p2,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"SUMMARY"}]}`)
	bridge := "You were originally given instructions from a user over one or more turns. Here were the user messages:\n\nfirst\n\nsecond\n\n" +
		"Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. " +
		"Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\n\nSUMMARY"
	want, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": bridge}}})
	same(t, input(t, "", lines("0.40.0")...), string(want))
	// The same file, asked as 0.40.0 would resume it.
	same(t, input(t, "0.40.0", lines("0.58.0")...), string(want))
}

// The items of a compaction's replacement_history are read from its line,
// as they are.
func TestReplacementHistory(t *testing.T) {
	kept := `{"type":"message","id":"msg_019cd71a-25ca-73c4-809c-000317156077","role":"user","content":[{"type":"input_text","text":"kept"}]}`
	got := input(t, "", meta("0.171.0"), item(prompt),
		`{"timestamp":"2026-03-10T09:36:00.000Z","type":"compacted","payload":{"message":"","replacement_history":[`+kept+`]}}`, item(call),
		item(`{"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"ok"}`))
	same(t, got, kept, call, `{"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"ok"}`)
	if got[0].From.Line != 3 || got[0].From.Index != 0 {
		t.Errorf("the kept item is at %+v, want line 3 index 0", got[0].From)
	}
}

func TestStdinAndChangedFile(t *testing.T) {
	if _, err := Items(&reconstruct.State{}, "-", Options{}); !errors.Is(err, ErrStdin) {
		t.Errorf("standard input: %v, want ErrStdin", err)
	}
	path := filepath.Join(t.TempDir(), "rollout-2026-03-10T09-35-30-"+threadID+".jsonl")
	if err := os.WriteFile(path, []byte(meta("0.171.0")+"\n"+item(prompt)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(meta("0.171.0")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Items(st, path, Options{}); err == nil {
		t.Error("a file cut after the replay: no error")
	}
}

// A line over the maximum that holds no live item is skipped when the
// items are read back, as the replay skipped it.
func TestLongLineElsewhere(t *testing.T) {
	long := `{"timestamp":"2026-03-10T09:35:42.000Z","type":"event_msg","payload":{"type":"agent_message","message":"` + strings.Repeat("x", 2000) + `"}}`
	path := filepath.Join(t.TempDir(), "rollout-2026-03-10T09-35-30-"+threadID+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join([]string{meta("0.171.0"), long, item(prompt)}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const max = 1000
	st, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{MaxLineBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	items, err := Items(st, path, Options{MaxLineBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	same(t, items, promptSent)
}
