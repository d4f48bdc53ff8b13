//go:build unix

package inplace_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// The guard's own cases; the commands that write through it (repair,
// reclaim, both undos) are tested with it in their packages and in
// cmd/rollout.

const agentLine = `{"timestamp":"2026-03-10T10:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"written during the switch"}}` + "\n"

func rolloutIn(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, filetest.BrokenRollout(t, 20_000), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func refusal(t *testing.T, err error, kind inplace.Kind) *inplace.Refusal {
	t.Helper()
	var r *inplace.Refusal
	if !errors.As(err, &r) || r.Kind != kind {
		t.Fatalf("%v, want a refusal of kind %d", err, kind)
	}
	return r
}

// TestLockIsExclusive: a second rewrite of a file whose lock is held is
// refused (Busy) until the first releases it.
func TestLockIsExclusive(t *testing.T) {
	path := rolloutIn(t)
	g, err := inplace.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = inplace.Lock(path)
	if r := refusal(t, err, inplace.Busy); !strings.Contains(r.Error(), "another repair or reclaim of") {
		t.Errorf("the refusal does not say why: %v", r)
	}
	g.Release()
	g, err = inplace.Lock(path)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	g.Release()
}

// TestReplaceRefusesChangedFile: a file no longer as long as the command
// read it is not replaced (Changed), and the step is not run.
func TestReplaceRefusesChangedFile(t *testing.T) {
	path := rolloutIn(t)
	g, err := inplace.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	read, _ := g.Size()
	filetest.Append(t, path, []byte(agentLine))
	ran := false
	_, err = g.Replace(inplace.Switch{Read: read}, func() error { ran = true; return nil })
	refusal(t, err, inplace.Changed)
	if ran {
		t.Error("the step ran on a changed file")
	}
}

// TestReplaceKeepsLateBytes: what an agent appends right before the rename
// reaches the old inode; the guard copies it to FILE.late and says where.
func TestReplaceKeepsLateBytes(t *testing.T) {
	path := rolloutIn(t)
	place, err := artifacts.For(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := inplace.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	read, _ := g.Size()
	next := path + ".new"
	os.WriteFile(next, []byte("the replacement\n"), 0o644)
	at := func(stage string) {
		if stage == inplace.StageSwitch {
			filetest.Append(t, path, []byte(agentLine))
		}
	}
	late, err := g.Replace(inplace.Switch{Read: read, Place: place, At: at}, func() error { return os.Rename(next, path) })
	if err != nil || late == nil {
		t.Fatalf("replace: %v, late %v", err, late)
	}
	if late.Bytes != int64(len(agentLine)) || late.Kept == "" || !bytes.Equal(filetest.Read(t, late.Kept), []byte(agentLine)) {
		t.Errorf("late %+v: want the appended line kept", late)
	}
	if !strings.Contains(late.Error(), "grew by") || !strings.Contains(late.Error(), late.Kept) {
		t.Errorf("the error does not name where the bytes are: %v", late)
	}
	if got := string(filetest.Read(t, path)); got != "the replacement\n" {
		t.Errorf("the file is %q", got)
	}
}

// TestLockInCodexHome: in a Codex home the guard holds Codex's
// maintenance lock while it holds the file, refuses (Busy) while Codex's
// compression or migration holds it, and refuses (CodexWriter, naming the
// pid) while Codex holds the thread's writer lock.
func TestLockInCodexHome(t *testing.T) {
	root, path := filetest.CodexHomeWithTear(t)
	maint := filepath.Join(root, home.MaintenanceLockPath)
	g, err := inplace.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if !flocked(t, maint) {
		t.Error("Codex could take the maintenance lock while the guard held the rollout")
	}
	g.Release()

	f := filetest.Flock(t, maint)
	_, err = inplace.Lock(path)
	if r := refusal(t, err, inplace.Busy); !strings.Contains(r.Error(), "compression or migration is running") {
		t.Errorf("the refusal does not say why: %v", r)
	}
	f.Close()

	w := filetest.Flock(t, filepath.Join(root, home.WriterLocksDir, homegen.Thread+".lock"))
	fmt.Fprintf(w, "pid=%d\n", os.Getpid())
	_, err = inplace.Lock(path)
	if r := refusal(t, err, inplace.CodexWriter); !strings.Contains(r.Error(), fmt.Sprintf("PID %d", os.Getpid())) {
		t.Errorf("the refusal does not name the pid: %v", r)
	}
	if r := inplace.CheckCodexWriter(path); r == nil || r.Kind != inplace.CodexWriter {
		t.Errorf("CheckCodexWriter: %v", r)
	}
	w.Close()
}

// flocked reports whether another holder has path locked.
func flocked(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("no lock file %s: %v", path, err)
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
}
