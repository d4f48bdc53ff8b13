//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerifyDirWithFIFO: a FIFO named like a rollout used to hang verify;
// now it is reported as an input that could not be analysed (exit 3) and
// the other rollouts are verified.
func TestVerifyDirWithFIFO(t *testing.T) {
	dir := t.TempDir()
	legacy, err := os.ReadFile("testdata/legacy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rollout-a.jsonl"), legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "rollout-b.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var code int
	io, stdout, stderr := testIO("")
	go func() {
		code = run([]string{"verify", "--format", "json", dir}, io)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		// Unblock the old code's open so the test binary can end.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("verify hangs on a FIFO")
	}
	if code != exitIncomplete {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitIncomplete, stderr)
	}
	if want := fifo + ": not a regular file (a FIFO): not read"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	if !strings.Contains(stdout.String(), `"rule": "item/missing-id"`) {
		t.Errorf("the readable rollout was not verified:\n%s", stdout)
	}
}
