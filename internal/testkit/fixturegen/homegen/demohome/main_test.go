package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/home"
)

// TestDemoHome: the home of the README's tour of `rollout home` has the
// two findings the tour shows, and nothing else.
func TestDemoHome(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-home")
	if err := build(dir); err != nil {
		t.Fatal(err)
	}
	rep, err := home.Check(home.New(dir), home.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range rep.Observations {
		fd, ok := checks.FindingOf(o.Path, o.Observation)
		if !ok {
			t.Fatalf("observation %T has no rule", o.Evidence)
		}
		got = append(got, fd.Rule+" "+fd.Severity.String())
	}
	slices.Sort(got)
	want := []string{"home/rollout-without-row warning", "home/writer-lock-stale info"}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	if err := build(dir); err == nil {
		t.Error("build over an existing directory succeeded")
	}
}
