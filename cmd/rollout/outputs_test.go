//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestReportOutputsKeepWhatTheyName: a report written to a symlink, a FIFO
// or a new file under a strict umask leaves the link, the FIFO and the
// umask as they were (issue 11: the old writer renamed over all of them).
func TestReportOutputsKeepWhatTheyName(t *testing.T) {
	dir := t.TempDir()
	legacy, _ := filepath.Abs("testdata/legacy.jsonl")

	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := filetest.ReadFIFO(fifo)
	fresh := filepath.Join(dir, "fresh.sarif")

	old := syscall.Umask(0o077)
	io_, _, stderr := testIO("")
	code := run([]string{"verify", "--fail-on", "never", "--format", "json=" + link,
		"--format", "github=" + fifo, "--format", "sarif=" + fresh, legacy}, io_)
	syscall.Umask(old)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}

	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced (%v)", err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), `"schema_version"`) {
		t.Errorf("the symlink's target did not get the report: %q", b)
	}
	select {
	case s := <-got:
		if !strings.Contains(s, "::warning file=") {
			t.Errorf("the FIFO's reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came through the FIFO")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new report under umask 077: %v %v, want 0600", fi.Mode().Perm(), err)
	}
}
