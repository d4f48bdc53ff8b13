package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// Every long-running command shows the one progress line (count, bytes,
// erased at the end) on a terminal, and nothing when stderr is not one or
// with --quiet.
func TestProgressEveryCommand(t *testing.T) {
	home := t.TempDir()
	if _, err := bloatgen.Write(home, bloatgen.Options{}); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(home, "sessions")
	fleet := t.TempDir()
	for i, src := range []string{"../../fixtures/budget/basic.jsonl", "../../fixtures/budget/calibration.jsonl"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fleet, "rollout-"+string(rune('a'+i))+".jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		verb string
		args []string
	}{
		{"verifying", []string{"verify", "--fail-on", "never", sessions}},
		{"reading", []string{"space", sessions}},
		{"planning", []string{"reclaim", "--policy", "superseded-checkpoints", sessions}},
		{"proving", []string{"reclaim", "--policy", "superseded-checkpoints", sessions}},
		{"simulating", []string{"simulate-budget", "--window", "100k", fleet}},
		{"repairing", []string{"repair", sessions}},
	} {
		for _, mode := range []string{"terminal", "pipe", "quiet"} {
			io, stdout, stderr := testIO("")
			io.ErrIsTTY = mode != "pipe"
			args := c.args
			if mode == "quiet" {
				args = append([]string{args[0], "--quiet"}, args[1:]...)
			}
			if code := run(args, io); code != exitOK {
				t.Fatalf("%s: exit %d\n%s", args, code, stderr)
			}
			shown := strings.Contains(stderr.String(), "\r"+c.verb+" ")
			if shown != (mode == "terminal") {
				t.Errorf("%s (%s): progress shown %v:\n%q", args, mode, shown, stderr)
			}
			if mode == "terminal" && (!strings.HasSuffix(stderr.String(), "\r\x1b[K") || !strings.Contains(stderr.String(), " of ")) {
				t.Errorf("%s: the progress line has no bytes or is not erased at the end:\n%q", args, stderr)
			}
			if strings.Contains(stdout.String(), "\r") {
				t.Errorf("%s: progress on stdout", args)
			}
		}
	}
}
