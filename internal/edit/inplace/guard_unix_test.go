//go:build unix

package inplace_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
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
// reaches the old inode; the guard keeps that inode (a hard link in the
// file's place) and says from which offset its bytes belong to the file.
func TestReplaceKeepsLateBytes(t *testing.T) {
	path := rolloutIn(t)
	original := filetest.Read(t, path)
	late, _ := replaceWithAppend(t, path, nil)
	if late == nil {
		t.Fatal("no late bytes reported")
	}
	if late.Bytes != int64(len(agentLine)) || !late.Inode || late.From != int64(len(original)) {
		t.Errorf("late %+v: want the %d appended bytes, from offset %d of the kept inode", late, len(agentLine), len(original))
	}
	if got := filetest.Read(t, late.Kept); !bytes.Equal(got, append(original, agentLine...)) {
		t.Errorf("%s is not the replaced file with the appended line", late.Kept)
	}
	if !strings.Contains(late.Error(), "grew by") || !strings.Contains(late.Error(), late.Kept) {
		t.Errorf("the error does not name where the bytes are: %v", late)
	}
	if got := string(filetest.Read(t, path)); got != "the replacement\n" {
		t.Errorf("the file is %q", got)
	}
}

// TestReplaceKeepsWhatAWriterAppendsLater: a writer that took its
// descriptor before the rename appends once during the switch and again
// after the command is done (it never reopens the file). Both lines are in
// the kept inode, and the command the error gives puts both back.
func TestReplaceKeepsWhatAWriterAppendsLater(t *testing.T) {
	if _, err := exec.LookPath("tail"); err != nil {
		t.Skip("no tail to run the hint with")
	}
	path := rolloutIn(t)
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	late, release := replaceWithAppend(t, path, w)
	release() // the command exits; the writer goes on
	later := strings.Replace(agentLine, "during the switch", "after the command exited", 1)
	if _, err := w.WriteString(later); err != nil {
		t.Fatal(err)
	}
	if late == nil || !late.Inode {
		t.Fatalf("late %+v: want the replaced inode kept", late)
	}
	_, hint, ok := strings.Cut(late.Error(), "with: ")
	if !ok {
		t.Fatalf("the error gives no command: %v", late)
	}
	if out, err := exec.Command("sh", "-c", hint).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", hint, err, out)
	}
	if got, want := string(filetest.Read(t, path)), "the replacement\n"+agentLine+later; got != want {
		t.Errorf("after the hint, the file is %q, want %q", got, want)
	}
}

// TestReplaceLeavesNoLinkWhenNothingArrives: with no late bytes and no
// writer, the link the guard made of the replaced file is removed again.
func TestReplaceLeavesNoLinkWhenNothingArrives(t *testing.T) {
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
	replaced, _ := os.Stat(path)
	linked := false
	at := func(string) { // another name of the replaced inode in its place
		for _, n := range filetest.List(t, place.Dir) {
			if fi, err := os.Stat(filepath.Join(place.Dir, n)); err == nil && n != filepath.Base(path) && os.SameFile(fi, replaced) {
				linked = true
			}
		}
	}
	late, err := g.Replace(inplace.Switch{Read: read, Place: place, At: at}, func() error { return os.Rename(next, path) })
	if err != nil || late != nil {
		t.Fatalf("replace: %v, late %v", err, late)
	}
	if !linked {
		t.Error("the replaced inode was not kept during the switch")
	}
	if left := place.Temps(); !outfile.Absent(place.Backup(0)) || len(left) > 0 {
		t.Errorf("left behind: %s %v", place.Backup(0), left)
	}
}

// replaceWithAppend replaces path under the guard while w (nil: a new
// descriptor) appends agentLine during the switch. It returns the late
// bytes and the guard's release.
func replaceWithAppend(t *testing.T, path string, w *os.File) (*inplace.Late, func()) {
	t.Helper()
	place, err := artifacts.For(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := inplace.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Release)
	read, _ := g.Size()
	next := path + ".new"
	os.WriteFile(next, []byte("the replacement\n"), 0o644)
	at := func(stage string) {
		if stage != inplace.StageSwitch {
			return
		}
		if w == nil {
			filetest.Append(t, path, []byte(agentLine))
		} else if _, err := w.WriteString(agentLine); err != nil {
			t.Fatal(err)
		}
	}
	late, err := g.Replace(inplace.Switch{Read: read, Place: place, At: at}, func() error { return os.Rename(next, path) })
	if err != nil {
		t.Fatalf("replace: %v", err)
	}
	return late, g.Release
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
