//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hostileSetup writes a broken rollout (a repair changes it and quarantines
// its torn tail) in a new directory.
func hostileSetup(t *testing.T) (dir, path string, input []byte) {
	t.Helper()
	input = brokenRollout(t, 40_000)
	dir = t.TempDir()
	path = filepath.Join(dir, "rollout.jsonl")
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path, input
}

// TestRepairRefusesFileOpenForWriting: an agent idle between turns keeps
// its rollout open for append; repair --write used to replace it (exit 0)
// and the agent's next write went to the old inode. Now it is refused,
// naming the process, unless --force; a reader does not count.
func TestRepairRefusesFileOpenForWriting(t *testing.T) {
	_, path, input := hostileSetup(t)
	hold := func(flag int) *exec.Cmd {
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command("sleep", "60")
		cmd.ExtraFiles = []*os.File{f}
		if err := cmd.Start(); err != nil {
			t.Skip("no sleep:", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}

	reader := hold(os.O_RDONLY)
	writer := hold(os.O_WRONLY | os.O_APPEND)
	code, stderr := runRepairWith(path, nil, "--write")
	if code != exitUnsafe {
		t.Fatalf("exit %d, want %d\n%s", code, exitUnsafe, stderr)
	}
	want := "is open for writing by pid " + strconv.Itoa(writer.Process.Pid) + " (sleep)"
	if !strings.Contains(stderr, want) || strings.Contains(stderr, strconv.Itoa(reader.Process.Pid)) {
		t.Errorf("stderr should name the writer only (%q):\n%s", want, stderr)
	}
	if got := readFile(t, path); !bytes.Equal(got, input) {
		t.Error("the refused repair changed the file")
	}
	if code, stderr := runRepairWith(path, nil, "--write", "--force"); code != exitOK {
		t.Fatalf("--force: exit %d\n%s", code, stderr)
	}
}

// TestRepairsNeverInterleave: a second repair of a file while a first one
// is writing it is refused (exit 4); the first completes, and every
// removed line is in the quarantine exactly once.
func TestRepairsNeverInterleave(t *testing.T) {
	_, path, _ := hostileSetup(t)
	paused, resume := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var firstCode int
	var firstErr string
	wg.Add(1)
	go func() {
		defer wg.Done()
		firstCode, firstErr = runRepairWith(path, func(s string) {
			if s == "written" {
				close(paused)
				<-resume
			}
		}, "--write")
	}()
	select {
	case <-paused:
	case <-time.After(30 * time.Second):
		t.Fatal("the first repair never reached the write")
	}
	code, stderr := runRepairWith(path, nil, "--write", "--fix", "all")
	close(resume)
	wg.Wait()
	if code != exitUnsafe || !strings.Contains(stderr, "another repair or reclaim of") {
		t.Errorf("second repair: exit %d, want %d (another repair is running)\n%s", code, exitUnsafe, stderr)
	}
	if firstCode != exitOK {
		t.Fatalf("first repair: exit %d\n%s", firstCode, firstErr)
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
	if code, stderr := runRepairWith(path, nil, "--write"); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
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
			done := make(chan struct{})
			var code int
			var stderr string
			go func() {
				code, stderr = runRepairWith(path, nil, "--write")
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				if f, err := os.OpenFile(made, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatal("repair hangs")
			}
			if code != exitUnsafe || !strings.Contains(stderr, "not a regular file") {
				t.Errorf("exit %d, want %d (not a regular file)\n%s", code, exitUnsafe, stderr)
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

// TestRepairReportsHardLinks: the other names of a hard-linked rollout keep
// the old content; the plan says so.
func TestRepairReportsHardLinks(t *testing.T) {
	dir, path, _ := hostileSetup(t)
	if err := os.Link(path, filepath.Join(dir, "alias.jsonl")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runRollout("repair", path)
	if code == exitUsage || code == exitUnsafe || code == exitInternal {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want := "has 1 other hard link: it keeps the old content"; !strings.Contains(stdout, want) {
		t.Errorf("the plan does not say %q:\n%s", want, stdout)
	}
}

// TestRepairKilledBetweenRenamesNoDuplicates: killed after the quarantine
// was renamed into place but before the rollout was, a re-run removes the
// same lines again; their entries must not be added twice.
func TestRepairKilledBetweenRenamesNoDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	_, path, input := hostileSetup(t)
	paused := killAtStage(t, "quarantined", "repair", "--write", path)
	if !paused {
		t.Fatal("the helper never reached the quarantine rename")
	}
	if got := readFile(t, path); !bytes.Equal(got, input) {
		t.Fatal("the rollout changed before its rename")
	}
	first := readFile(t, path+".quarantine.jsonl")
	if code, stderr := runRepairWith(path, nil, "--write"); code != exitOK {
		t.Fatalf("re-run: exit %d\n%s", code, stderr)
	}
	if got := readFile(t, path+".quarantine.jsonl"); !bytes.Equal(got, first) {
		t.Errorf("the re-run added entries again:\nafter the kill:\n%s\nafter the re-run:\n%s", first, got)
	}
}

// TestRepairOutputNeverReplacesAFIFO: -o naming a device or FIFO was
// renamed over (as root, -o /dev/null replaced the device); it is refused
// and stays what it is.
func TestRepairOutputNeverReplacesAFIFO(t *testing.T) {
	dir, path, _ := hostileSetup(t)
	fifo := filepath.Join(dir, "out.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var code int
	var stderr string
	go func() {
		code, stderr = runRepairWith(path, nil, "--write", "-o", fifo)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("repair -o FIFO hangs")
	}
	if code != exitUnsafe || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("exit %d, want %d (not a regular file)\n%s", code, exitUnsafe, stderr)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}
}
