//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestStickyDirRefusalLeavesNothing: in a sticky directory (like /tmp) an
// unprivileged user may write another user's 0666 rollout but not rename
// over it. repair --write used to find that out at the rename, after the
// backup (a hard link it could not remove again) and the quarantine were in
// place, and left both. Now it refuses (exit 4) before making either, and
// the directory holds exactly what it held.
func TestStickyDirRefusalLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand a file to another user and run as nobody")
	}
	base := t.TempDir()
	for d := base; d != filepath.Dir(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
		if d == os.TempDir() {
			break
		}
		os.Chmod(d, 0o755) // nobody must reach the directory
	}
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777|os.ModeSticky)
	input := filetest.BrokenRollout(t, 30_000)
	path := filepath.Join(shared, "rollout.jsonl")
	if err := os.WriteFile(path, input, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o666) // root's file, writable by anyone
	bin := filepath.Join(base, "rollout.test")
	copyExecutable(t, os.Args[0], bin)

	cmd := exec.Command(bin, "-test.run=^TestRepairHelperProcess$", "--", "repair", "--write", path)
	cmd.Env = append(os.Environ(), "ROLLOUT_REPAIR_HELPER=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitUnsafe {
		t.Fatalf("repair as nobody: %v, want exit %d\n%s", err, exitUnsafe, out.String())
	}
	if names := filetest.List(t, shared); !cmp.Equal(names, []string{"rollout.jsonl"}) {
		t.Errorf("a refused repair left files behind: %v\n%s", names, out.String())
	}
	if !bytes.Equal(filetest.Read(t, path), input) {
		t.Error("the refused repair changed the file")
	}
}

func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
