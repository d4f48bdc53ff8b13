//go:build unix

package home_test

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/conformance"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestLiveRevertedHome: on the homes Codex 0.171.0 makes with
// thread/revert (the conformance scenario revert), then a resumed turn,
// then a second revert, rollout home finds nothing at each stage, while
// the history database keeps a projection of every file. Skipped without
// Codex 0.171.0 in the cache (about a minute).
func TestLiveRevertedHome(t *testing.T) {
	c, ok := conformance.Installed("0.171.0")
	if !ok {
		t.Skip("Codex 0.171.0 is not installed in " + conformance.CacheDir() + ": live test skipped")
	}
	if testing.Short() {
		t.Skip("live Codex test: not in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m := conformance.NewMock()
	defer m.Close()
	var revert conformance.Scenario
	for _, sc := range conformance.Scenarios {
		if sc.Name == "revert" {
			revert = sc
		}
	}
	s, err := conformance.Generate(ctx, c, m, revert, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	h := s.Home
	clean := func(stage string, files int) {
		t.Helper()
		fds, rep := filetest.HomeFindings(t, h.Dir)
		for _, fd := range fds {
			t.Errorf("%s: %s:%d: %s [%s]", stage, fd.Path, fd.Line, fd.Message, fd.Rule)
		}
		if rep.Files != files || len(rep.Notes) > 0 {
			t.Errorf("%s: %d rollouts (want %d), notes %v", stage, rep.Files, files, rep.Notes)
		}
	}
	clean("after thread/revert", 2)

	must := func(r *conformance.Run, err error) {
		t.Helper()
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("codex: %v %+v", err, r)
		}
	}
	must(h.Resume(ctx, s.ID, conformance.Marker+" shell,msg"))
	clean("after a resumed turn", 2)

	rows, err := home.New(h.Dir).Threads()
	if err != nil || len(rows) != 1 {
		t.Fatalf("threads rows %+v, %v", rows, err)
	}
	turn := lastTurn(t, rows[0].RolloutPath)
	r, res, err := h.AppServerExperimental(ctx, []conformance.RPC{
		{Method: "thread/resume", Params: map[string]any{"threadId": s.ID}},
		{Method: "thread/revert", Params: map[string]any{"threadId": s.ID, "beforeTurnId": turn}}})
	must(r, err)
	for _, x := range res {
		if x.Error != nil {
			t.Fatalf("%s: %s", x.Method, x.Error)
		}
	}
	clean("after a second thread/revert", 3)
}

// lastTurn is the id of the last turn a rollout started.
func lastTurn(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	turn := ""
	for sc.Scan() {
		if gjson.GetBytes(sc.Bytes(), "payload.type").String() == "task_started" {
			turn = gjson.GetBytes(sc.Bytes(), "payload.turn_id").String()
		}
	}
	if turn == "" {
		t.Fatalf("%s: no turn", path)
	}
	return turn
}
