//go:build linux

package repair_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// hostileSetup writes a broken rollout (a repair changes it and quarantines
// its torn tail) in a new directory.
func hostileSetup(t *testing.T) (dir, path string, input []byte) {
	t.Helper()
	input = filetest.BrokenRollout(t, 40_000)
	dir = t.TempDir()
	path = filepath.Join(dir, "rollout.jsonl")
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path, input
}

// TestRepairRefusesFileOpenForWriting: an agent idle between turns keeps
// its rollout open for append; repair --write used to replace it and the
// agent's next write went to the old inode. Now it is refused (InUse),
// naming the process, unless Force; a reader does not count.
func TestRepairRefusesFileOpenForWriting(t *testing.T) {
	_, path, input := hostileSetup(t)
	reader := filetest.HoldOpen(t, path, os.O_RDONLY)
	writer := filetest.HoldOpen(t, path, os.O_WRONLY|os.O_APPEND)
	_, r, _ := writeInPlace(path, nil)
	if r == nil || r.Kind != inplace.InUse {
		t.Fatalf("refusal %v, want InUse", r)
	}
	want := "is open for writing by pid " + strconv.Itoa(writer.Process.Pid) + " (sleep)"
	if !strings.Contains(r.Error(), want) || strings.Contains(r.Error(), strconv.Itoa(reader.Process.Pid)) {
		t.Errorf("the refusal should name the writer only (%q):\n%s", want, r)
	}
	if got := readFile(t, path); !bytes.Equal(got, input) {
		t.Error("the refused repair changed the file")
	}
	o, _, err := repairWrite(repair.Options{Path: path, Write: true, Force: true})
	if err != nil || exitOf(o) != 0 {
		t.Fatalf("Force: %v, exit %d", err, exitOf(o))
	}
}

// TestRepairsNeverInterleave: a second repair of a file while a first one
// is writing it is refused (Busy); the first completes, and every removed
// line is in the quarantine exactly once.
func TestRepairsNeverInterleave(t *testing.T) {
	_, path, _ := hostileSetup(t)
	paused, resume := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var first *repair.Outcome
	var firstErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, _, firstErr = writeInPlace(path, func(s string) {
			if s == "written" {
				close(paused)
				<-resume
			}
		})
	}()
	select {
	case <-paused:
	case <-time.After(30 * time.Second):
		t.Fatal("the first repair never reached the write")
	}
	_, r, _ := writeInPlace(path, nil, "all")
	close(resume)
	wg.Wait()
	if r == nil || r.Kind != inplace.Busy || !strings.Contains(r.Error(), "another repair or reclaim of") {
		t.Errorf("second repair: refusal %v, want Busy (another repair is running)", r)
	}
	if firstErr != nil || exitOf(first) != 0 {
		t.Fatalf("first repair: %v, exit %d", firstErr, exitOf(first))
	}
	q := readFile(t, path+".quarantine.jsonl")
	if n := bytes.Count(q, []byte("\n")); n != 1 {
		t.Errorf("quarantine holds %d entries, want the torn tail once:\n%s", n, q)
	}
}

// TestRepairKeepsOwnerModeXattrs: root repairing a user's 0600 rollout
// left it root:root; xattrs were dropped.
func TestRepairKeepsOwnerModeXattrs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	_, path, _ := hostileSetup(t)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	xattr := unix.Setxattr(path, "user.origin", []byte("codex"), 0) == nil
	if o, _, err := writeInPlace(path, nil); err != nil || exitOf(o) != 0 {
		t.Fatalf("repair: %v, exit %d", err, exitOf(o))
	}
	for _, p := range []string{path, path + ".quarantine.jsonl"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != 0o600 || st.Uid != 1234 || st.Gid != 5678 {
			t.Errorf("%s: %v %d:%d, want 0600 1234:5678", filepath.Base(p), fi.Mode().Perm(), st.Uid, st.Gid)
		}
	}
	if xattr {
		buf := make([]byte, 16)
		n, err := unix.Getxattr(path, "user.origin", buf)
		if err != nil || string(buf[:n]) != "codex" {
			t.Errorf("xattr user.origin lost: %q %v", buf[:max(n, 0)], err)
		}
	}
}

// TestRepairQuarantineAndBackupMustBeRegular: the quarantine path was
// trusted: a symlink to /dev/zero filled the disk, a FIFO hung, a symlink
// to another file copied that file into the quarantine.
func TestRepairQuarantineAndBackupMustBeRegular(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir, path string) (string, []byte) // the path made, and a file that must not change
	}{
		{"quarantine symlink to /dev/zero", func(t *testing.T, dir, path string) (string, []byte) {
			return path + ".quarantine.jsonl", nil
		}},
		{"quarantine symlink to another file", func(t *testing.T, dir, path string) (string, []byte) {
			return path + ".quarantine.jsonl", []byte("precious\n")
		}},
		{"quarantine FIFO", func(t *testing.T, dir, path string) (string, []byte) {
			if err := syscall.Mkfifo(path+".quarantine.jsonl", 0o600); err != nil {
				t.Fatal(err)
			}
			return path + ".quarantine.jsonl", nil
		}},
		{"backup symlink", func(t *testing.T, dir, path string) (string, []byte) {
			return path + ".bak", []byte("precious\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, input := hostileSetup(t)
			made, precious := tc.setup(t, dir, path)
			other := filepath.Join(dir, "other")
			if strings.Contains(tc.name, "symlink") {
				target := os.DevNull
				if precious != nil {
					os.WriteFile(other, precious, 0o644)
					target = other
				}
				if err := os.Symlink(target, made); err != nil {
					t.Fatal(err)
				}
			}
			r := refusedWithin(t, made, repair.Options{Path: path, Write: true})
			if r == nil || r.Kind != inplace.NotRegular || !strings.Contains(r.Error(), "not a regular file") {
				t.Errorf("refusal %v, want NotRegular (not a regular file)", r)
			}
			if got := readFile(t, path); !bytes.Equal(got, input) {
				t.Error("the refused repair changed the file")
			}
			if precious != nil {
				if got := readFile(t, other); !bytes.Equal(got, precious) {
					t.Errorf("the file the symlink names changed: %q", got)
				}
			}
			if fi, err := os.Lstat(made); err != nil || fi.Mode().IsRegular() {
				t.Errorf("%s was replaced (%v)", made, err)
			}
		})
	}
}

// refusedWithin runs a repair that must not hang on the FIFO (or other
// file) at hang, and returns its refusal.
func refusedWithin(t *testing.T, hang string, opts repair.Options) *inplace.Refusal {
	t.Helper()
	done := make(chan struct{})
	var r *inplace.Refusal
	go func() {
		o, _, err := repairWrite(opts)
		r = refusalOf(o, err)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		if f, err := os.OpenFile(hang, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("repair hangs")
	}
	return r
}

// TestRepairReportsHardLinks: the other names of a hard-linked rollout keep
// the old content; the plan says so.
func TestRepairReportsHardLinks(t *testing.T) {
	dir, path, _ := hostileSetup(t)
	if err := os.Link(path, filepath.Join(dir, "alias.jsonl")); err != nil {
		t.Fatal(err)
	}
	o, plan, err := repairWrite(repair.Options{Path: path})
	if err != nil || o.Refusal != nil {
		t.Fatalf("repair: %v %v", err, o.Refusal)
	}
	if want := "has 1 other hard link: it keeps the old content"; !strings.Contains(plan, want) {
		t.Errorf("the plan does not say %q:\n%s", want, plan)
	}
}

// TestRepairOutputNeverReplacesAFIFO: an Output naming a device or FIFO was
// renamed over (as root, -o /dev/null replaced the device); it is refused
// and stays what it is.
func TestRepairOutputNeverReplacesAFIFO(t *testing.T) {
	dir, path, _ := hostileSetup(t)
	fifo := filepath.Join(dir, "out.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r := refusedWithin(t, fifo, repair.Options{Path: path, Write: true, Output: fifo})
	if r == nil || r.Kind != inplace.NotRegular || !strings.Contains(r.Error(), "not a regular file") {
		t.Errorf("refusal %v, want NotRegular (not a regular file)", r)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}
}
