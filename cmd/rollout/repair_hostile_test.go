//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// The hostile cases the repair library answers alone (a writer holding the
// file, two repairs at once, owner and xattrs, quarantine, backup and
// output that are not regular files, hard links) are tested beside it, in
// internal/edit/repair/hostile_linux_test.go; this one kills the command.

// TestRepairKilledBetweenRenamesNoDuplicates: killed after the quarantine
// was renamed into place but before the rollout was, a re-run removes the
// same lines again; their entries must not be added twice.
func TestRepairKilledBetweenRenamesNoDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	input := filetest.BrokenRollout(t, 40_000)
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	paused := killAtStage(t, "quarantined", "repair", "--write", path)
	if !paused {
		t.Fatal("the helper never reached the quarantine rename")
	}
	if got := filetest.Read(t, path); !bytes.Equal(got, input) {
		t.Fatal("the rollout changed before its rename")
	}
	first := filetest.Read(t, path+".quarantine.jsonl")
	if code, stderr := runRepairWith(path, nil, "--write"); code != exitOK {
		t.Fatalf("re-run: exit %d\n%s", code, stderr)
	}
	if got := filetest.Read(t, path+".quarantine.jsonl"); !bytes.Equal(got, first) {
		t.Errorf("the re-run added entries again:\nafter the kill:\n%s\nafter the re-run:\n%s", first, got)
	}
}
