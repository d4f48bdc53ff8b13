package rollout

import (
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	t.Parallel()
	const thread = "019cae52-3c1a-7b40-9d2e-5f1a2b3c4d5e"
	const rev = "019cae60-0000-7000-8000-000000000001"
	tests := []struct {
		path string
		want Name
		ok   bool
	}{
		{"rollout-2026-03-02T10-15-30-" + thread + ".jsonl", Name{thread, thread}, true},
		{"archived_sessions/rollout-2026-03-02T10-15-30-" + thread + "_" + rev + ".jsonl.zst", Name{thread, rev}, true},
		{"rollout-2026-03-02T10-15-30-" + strings.ToUpper(thread) + "_" + strings.ToUpper(rev) + ".jsonl", Name{thread, rev}, true},
		// Not Codex's time stamp: read from the right.
		{"rollout-x-" + thread + "_" + rev + ".jsonl", Name{thread, rev}, true},
		{"rollout-x-" + rev + ".jsonl", Name{rev, rev}, true},
		// A bad second id: the name carries no rollout id Codex reads; from
		// the right it is the thread id alone.
		{"rollout-2026-03-02T10-15-30-" + thread + "_" + rev[:35] + "Z.jsonl", Name{}, false},
		{"rollout-2026-03-02T10-15-30-" + thread + "_.jsonl", Name{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseName(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseName(%q) = %+v, %v; want %+v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
	if id, _ := ThreadIDFromName("rollout-2026-03-02T10-15-30-" + thread + "_" + rev + ".jsonl"); id != thread {
		t.Errorf("ThreadIDFromName of a reverted file = %s, want the thread %s", id, thread)
	}
	if id, _ := RolloutIDFromName("rollout-2026-03-02T10-15-30-" + thread + "_" + rev + ".jsonl"); id != rev {
		t.Errorf("RolloutIDFromName of a reverted file = %s, want %s", id, rev)
	}
	if n, _ := ParseName("rollout-2026-03-02T10-15-30-" + thread + ".jsonl"); n.Reverted() {
		t.Error("an ordinary name is not reverted")
	}
}
