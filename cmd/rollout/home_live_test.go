package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// liveCodex is the Codex the live home tests drive: the first version of
// $ROLLOUT_CONFORMANCE_VERSIONS (installed with npm when missing), else
// 0.171.0 when it is already in the cache; otherwise the test is skipped.
func liveCodex(t *testing.T) *conformance.Codex {
	t.Helper()
	if vs := strings.Fields(strings.ReplaceAll(os.Getenv("ROLLOUT_CONFORMANCE_VERSIONS"), ",", " ")); len(vs) > 0 {
		c, err := conformance.Install(context.Background(), vs[0])
		if err != nil {
			t.Skipf("Codex %s cannot be installed (%v): live home test skipped", vs[0], err)
		}
		return c
	}
	c, ok := conformance.Installed("0.171.0")
	if !ok {
		t.Skip("Codex 0.171.0 is not installed in " + conformance.CacheDir() + " (set ROLLOUT_CONFORMANCE_VERSIONS=0.171.0 to install it): live home test skipped")
	}
	return c
}

// TestLiveRepairOfResumedSession: on a home real Codex made, rollout home
// finds nothing; a torn record Codex projected around is repaired in
// place (the projection is deleted, as Codex does before a rewrite); Codex
// then resumes the thread, appends to the same file, and its projection
// matches the file (rollout home finds nothing after Codex's next write).
func TestLiveRepairOfResumedSession(t *testing.T) {
	c := liveCodex(t)
	ctx := context.Background()
	h, path, id := resumedThread(t, c)
	rel, _ := filepath.Rel(h.Dir, path)
	mustRun := mustCodex(t)
	clean := func(stage string) {
		t.Helper()
		homeClean(t, home.New(h.Dir), stage)
	}
	clean("the home Codex made")
	if p, _ := home.New(h.Dir).ProjectionOf(id); p == nil {
		t.Skipf("Codex %s keeps no projection of a paginated thread here: nothing to repair", c.Version)
	}

	// A torn record in the middle, projected around by Codex.
	insertTornRecord(t, path)
	if _, err := home.New(h.Dir).DeleteProjection(id); err != nil {
		t.Fatal(err)
	}
	mustRun(h.Resume(ctx, id, conformance.Marker+" msg"))

	code, out, e := runRollout("repair", "--write", path)
	if code != exitOK || !strings.Contains(out, "deleted Codex's projection of thread "+id) {
		t.Fatalf("repair: exit %d\n%s%s", code, out, e)
	}
	run := mustRun(h.Resume(ctx, id, conformance.Marker+" msg"))
	appended := false
	for _, ch := range run.Changes {
		switch {
		case ch.Path == rel && ch.What == "appended":
			appended = true
		case strings.HasSuffix(ch.Path, ".jsonl") && ch.Path != rel:
			t.Errorf("Codex wrote another rollout after the repair: %s %s", ch.What, ch.Path)
		}
	}
	if !appended {
		t.Errorf("Codex did not append to the repaired file: %+v", run.Changes)
	}
	clean("after Codex resumed the repaired file")
	fi, _ := os.Stat(path)
	if p, err := home.New(h.Dir).ProjectionOf(id); err != nil || p == nil || p.Cursor.Offset != fi.Size() {
		t.Errorf("projection after Codex's next write: %+v (%v), want its cursor at the end (%d)", p, err, fi.Size())
	}
}
