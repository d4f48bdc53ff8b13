//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// flockFile holds an exclusive flock on path, as Codex does, writing
// content into it; released at the end of the test.
func flockFile(t *testing.T, path, content string) {
	t.Helper()
	filetest.Flock(t, path).WriteString(content)
}

func holdWriterLock(t *testing.T, root string) {
	flockFile(t, filepath.Join(root, "thread-writer-locks", homegen.Thread+".lock"), fmt.Sprintf("pid=%d\n", os.Getpid()))
}

// TestWritesRefuseCodexWriter: while Codex holds the thread's writer lock,
// repair --write, reclaim --write and both undos exit 4 naming the pid,
// and the rollout and the databases stay byte-identical (--force does not
// override it).
func TestWritesRefuseCodexWriter(t *testing.T) {
	pid := fmt.Sprintf("PID %d", os.Getpid())
	refused := func(t *testing.T, root string, args ...string) {
		t.Helper()
		before := filetest.Tree(t, root)
		code, o, e := runRollout(args...)
		if out := o + e; code != exitUnsafe || !strings.Contains(out, pid) || !strings.Contains(out, "active Codex writer") {
			t.Errorf("%v: exit %d, want %d naming %s\n%s%s", args, code, exitUnsafe, pid, o, e)
		}
		if d := cmp.Diff(before, filetest.Tree(t, root)); d != "" {
			t.Errorf("%v: a refused write changed the home:\n%s", args, d)
		}
	}
	t.Run("repair", func(t *testing.T) {
		root, path := filetest.CodexHomeWithTear(t)
		holdWriterLock(t, root)
		refused(t, root, "repair", "--write", path)
		refused(t, root, "repair", "--write", "--force", path)
	})
	t.Run("reclaim", func(t *testing.T) {
		root, path := filetest.CodexHomeWithTear(t)
		holdWriterLock(t, root)
		refused(t, root, "reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path)
	})
	t.Run("repair-undo", func(t *testing.T) {
		root, path := filetest.CodexHomeWithTear(t)
		if code, o, e := runRollout("repair", "--write", path); code != exitOK {
			t.Fatalf("repair: exit %d\n%s%s", code, o, e)
		}
		holdWriterLock(t, root)
		refused(t, root, "repair", "--undo", path)
	})
	t.Run("reclaim-undo", func(t *testing.T) {
		root, path := filetest.CodexHomeWithTear(t)
		if code, o, e := runRollout("reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path); code != exitOK {
			t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
		}
		holdWriterLock(t, root)
		refused(t, root, "reclaim", "--undo", path+".zst")
	})
}

// TestWritesRefuseCodexMaintenance: while Codex's compression or migration
// holds the maintenance lock, a write is refused (exit 4) untouched; while
// a write runs, rollout holds that lock, so Codex skips its run.
func TestWritesRefuseCodexMaintenance(t *testing.T) {
	root, path := filetest.CodexHomeWithTear(t)
	lock := filepath.Join(root, ".tmp", "rollout-maintenance.lock")
	t.Run("held by Codex", func(t *testing.T) {
		f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		before := filetest.Tree(t, root)
		code, o, e := runRollout("repair", "--write", path)
		if code != exitUnsafe || !strings.Contains(e, "compression or migration is running") {
			t.Errorf("exit %d, want %d\n%s%s", code, exitUnsafe, o, e)
		}
		if d := cmp.Diff(before, filetest.Tree(t, root)); d != "" {
			t.Errorf("a refused write changed the home:\n%s", d)
		}
	})
	t.Run("held by rollout", func(t *testing.T) {
		heldDuring := false
		code, e := runRepairWith(path, func(stage string) {
			if stage != inplace.StageSwitch {
				return
			}
			f, err := os.Open(lock)
			if err != nil {
				t.Errorf("no maintenance lock file during the write: %v", err)
				return
			}
			defer f.Close()
			heldDuring = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
		}, "--write")
		if code != exitOK {
			t.Fatalf("repair: exit %d\n%s", code, e)
		}
		if !heldDuring {
			t.Error("Codex could take the maintenance lock while repair replaced the rollout")
		}
	})
}
