package reconstruct_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

const (
	ownThread    = "019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90"
	parentThread = "019cd6f2-8a30-7c1e-9d2a-00000000aaaa"
	otherThread  = "019cd6f2-8a30-7c1e-9d2a-00000000bbbb"
)

// foreignFile is a paginated rollout of ownThread (a sub-agent of
// parentThread) whose last two lines restart at ordinal 1 and name thread.
func foreignFile(mode, thread string) string {
	lines := []string{
		`{"timestamp":"2026-03-10T09:35:30.037Z","ordinal":0,"type":"session_meta","payload":{"id":"` + ownThread + `","parent_thread_id":"` + parentThread + `","timestamp":"2026-03-10T09:35:29.981Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.171.0","source":"cli","model_provider":"openai","history_mode":"` + mode + `"}}`,
		`{"timestamp":"2026-03-10T09:35:30.074Z","ordinal":1,"type":"event_msg","payload":{"type":"thread_settings_applied","thread_id":"` + ownThread + `","thread_settings":{}}}`,
		`{"timestamp":"2026-03-10T09:35:30.111Z","ordinal":2,"type":"event_msg","payload":{"type":"thread_settings_applied","thread_id":"` + ownThread + `","thread_settings":{}}}`,
		`{"timestamp":"2026-03-10T09:35:30.148Z","ordinal":1,"type":"event_msg","payload":{"type":"thread_settings_applied","thread_id":"` + thread + `","thread_settings":{}}}`,
		`{"timestamp":"2026-03-10T09:35:30.185Z","ordinal":2,"type":"event_msg","payload":{"type":"thread_settings_applied","thread_id":"` + thread + `","thread_settings":{}}}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestForeignRecords: a restarting run is another rollout's only when it
// names a thread that is neither the file's nor its parent's, and only in
// a paginated file.
func TestForeignRecords(t *testing.T) {
	for _, tc := range []struct {
		mode, thread string
		want         string
	}{
		{"paginated", otherThread, "line 4: {After:2 First:1 Records:2 Through:5 ThreadID:" + otherThread + "}"},
		{"paginated", parentThread, ""},
		{"paginated", ownThread, ""},
		{"legacy", otherThread, ""},
	} {
		var got []string
		_, err := reconstruct.Replay(strings.NewReader(foreignFile(tc.mode, tc.thread)), reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
			if ev, ok := o.Evidence.(reconstruct.OrdinalForeignEvidence); ok {
				got = append(got, fmt.Sprintf("line %d: %+v", o.Pos.Line, ev))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%s file, run naming %s: got %q, want %q", tc.mode, tc.thread, got, tc.want)
		}
	}
}
