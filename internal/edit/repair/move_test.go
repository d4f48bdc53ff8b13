package repair

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/checks"
)

// TestOutputMovedAfterItsCall: an output written before its call (a bad
// merge swapped the two lines) goes back right after its call, byte for
// byte, instead of being quarantined as an orphan; the repaired file is
// the one Codex wrote (internal/testkit/conformance corrupt/output-before-call
// records every release resuming it), and it verifies clean.
func TestOutputMovedAfterItsCall(t *testing.T) {
	written := strings.Join([]string{
		`{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90","timestamp":"2026-03-10T09:35:29.981Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.110.0","source":"cli","model_provider":"openai"}}`,
		`{"timestamp":"2026-03-10T09:35:30.111Z","type":"response_item","payload":{"type":"message","id":"msg_019cd6f2-b50b-700b-800b-00000000000b","role":"user","content":[{"type":"input_text","text":"Which migrations are pending?"}]}}`,
		`{"timestamp":"2026-03-10T09:35:30.185Z","type":"response_item","payload":{"type":"function_call","id":"fc_019cd6f2-b50c-700c-800c-00000000000c","name":"shell_command","arguments":"{\"command\":\"ls\"}","call_id":"call_1A"}}`,
		`{"timestamp":"2026-03-10T09:35:30.200Z","type":"event_msg","payload":{"type":"token_count","info":null}}`,
		`{"timestamp":"2026-03-10T09:35:30.222Z","type":"response_item","payload":{"type":"function_call_output","id":"fco_019cd6f2-b50d-700d-800d-00000000000d","call_id":"call_1A","output":"0001_init.sql\n"}}`,
		`{"timestamp":"2026-03-10T09:35:30.259Z","type":"response_item","payload":{"type":"message","id":"msg_019cd6f2-b50e-700e-800e-00000000000e","role":"assistant","content":[{"type":"output_text","text":"none"}]}}`,
	}, "\n") + "\n"
	ls := strings.SplitAfter(written, "\n")
	ls[2], ls[4] = ls[4], ls[2]
	swapped := strings.Join(ls, "")

	dir := t.TempDir()
	in := filepath.Join(dir, "rollout.jsonl")
	if err := os.WriteFile(in, []byte(swapped), 0o644); err != nil {
		t.Fatal(err)
	}
	sel, err := checks.SelectFixes([]string{"tool/orphan-output"})
	if err != nil {
		t.Fatal(err)
	}
	opts := options(in)
	opts.Fix = sel
	o, err := run(t, opts)
	if err != nil || o.Refusal != nil || !o.Wrote {
		t.Fatalf("repair: %v %+v", err, o)
	}
	// The output now follows its call; the line between keeps its place.
	want := strings.Join([]string{ls[0], ls[1], ls[3], ls[4], ls[2], ls[5]}, "")
	if got := read(t, in); !bytes.Equal(got, []byte(want)) {
		t.Errorf("repaired file:\n%s\nwant:\n%s", got, want)
	}
	res, err := checks.Run(in, nil, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("after repair: line %d %s: %s", f.Line, f.Rule, f.Message)
	}
}
