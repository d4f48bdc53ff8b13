package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// installedCodex returns Codex version v, installing it with npm when it is
// not in the cache; the test is skipped, saying why, when it cannot be.
func installedCodex(t *testing.T, v string) *conformance.Codex {
	t.Helper()
	if c, ok := conformance.Installed(v); ok {
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := conformance.Install(ctx, v)
	if err != nil {
		t.Skipf("Codex %s cannot be installed here (npm): %v: live test skipped", v, err)
	}
	return c
}

// resumedThread is a home where Codex c, against a new mock, started a
// thread (a shell call, an answer) and resumed it once: the home, its
// rollout and the thread id.
func resumedThread(t *testing.T, c *conformance.Codex) (h *conformance.Home, path, id string) {
	t.Helper()
	m := conformance.NewMock()
	t.Cleanup(m.Close)
	h, err := conformance.NewHome(t.TempDir(), c, m)
	if err != nil {
		t.Fatal(err)
	}
	mustRun := mustCodex(t)
	ctx := context.Background()
	mustRun(h.Exec(ctx, conformance.Marker+" shell,msg"))
	files := h.Rollouts()
	if len(files) != 1 {
		t.Fatalf("rollouts %v", files)
	}
	path = filepath.Join(h.Dir, files[0])
	id = conformance.SessionID(path)
	mustRun(h.Resume(ctx, id, conformance.Marker+" msg"))
	return h, path, id
}

// mustCodex fails the test unless Codex ran and exited 0.
func mustCodex(t *testing.T) func(*conformance.Run, error) *conformance.Run {
	return func(r *conformance.Run, err error) *conformance.Run {
		t.Helper()
		if err != nil {
			t.Fatalf("codex: %v", err)
		}
		if r.ExitCode != 0 {
			t.Fatalf("codex %v: exit %d\n%s", r.Args, r.ExitCode, r.Stderr)
		}
		return r
	}
}

// insertTornRecord puts a torn record after the fifth line: repair moves
// it to the quarantine.
func insertTornRecord(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	torn := `{"timestamp":"2026-12-01T20:30:53.100Z","type":"event_msg","payload":{"type":"tok` + "\n"
	lines = append(lines[:5], append([]string{torn}, lines[5:]...)...)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reclaimPolicies are the policies that cut a reclaimableSession.
const reclaimPolicies = "superseded-checkpoints,before-turn=1"

// reclaimableSession makes, with real Codex in h, a session that reclaim's
// policies cut: large tool outputs (bigshell) and two local compactions,
// so the first compaction's checkpoint is superseded, and a turn after
// them; Codex resumed it three times. It returns the rollout, relative to
// the home, and the thread id.
func reclaimableSession(t *testing.T, h *conformance.Home) (rel, id string) {
	t.Helper()
	ctx := context.Background()
	h.Config = append(h.Config, "model_auto_compact_token_limit=50000")
	mustCodex(t)(h.Exec(ctx, conformance.Marker+" bigshell,msg"))
	files := h.Rollouts()
	if len(files) != 1 {
		t.Fatalf("rollouts %v", files)
	}
	rel = files[0]
	id = conformance.SessionID(filepath.Join(h.Dir, rel))
	for _, prompt := range []string{"bigshell,big,shell,msg", "reason,bigshell,big,shell,msg", "msg"} {
		mustCodex(t)(h.Resume(ctx, id, conformance.Marker+" "+prompt))
	}
	return rel, id
}
