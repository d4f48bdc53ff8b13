package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestDemoHome: the home of the README's tour of `rollout home` has the
// two findings the tour shows, and nothing else.
func TestDemoHome(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-home")
	if err := build(dir); err != nil {
		t.Fatal(err)
	}
	fds, _ := filetest.HomeFindings(t, dir)
	var got []string
	for _, fd := range fds {
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
