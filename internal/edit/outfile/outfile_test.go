//go:build linux

package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

func writeString(t *testing.T, path string, opts Options, s string) {
	t.Helper()
	if err := Write(path, opts, func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}); err != nil {
		t.Fatalf("Write(%s): %v", path, err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustWrite(t *testing.T, path, s string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), perm); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusesInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	mustWrite(t, in, "{}\n", 0o644)
	if err := os.Link(in, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("r.jsonl", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("r.jsonl.quarantine.jsonl", filepath.Join(dir, "qlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(t.TempDir(), "d")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "other.jsonl"), "", 0o644)
	var inputs Inputs
	inputs.Add(in, "-", filepath.Join(dir, "missing.jsonl"))

	cwd, _ := os.Getwd()
	defer os.Chdir(cwd)
	os.Chdir(dir)
	for _, tc := range []struct {
		out  string
		what string // "" for allowed
	}{
		{in, "is"},
		{"r.jsonl", "is"},
		{filepath.Join(dir, ".", "r.jsonl"), "is"},
		{filepath.Join(dir, "hard"), "is"},
		{filepath.Join(dir, "link"), "is"},
		{filepath.Join(dir, "r.jsonl.quarantine.jsonl"), "is the quarantine file of"},
		{filepath.Join(dir, "qlink"), "is the quarantine file of"},
		{filepath.Join(dir, "r.jsonl.bak"), "is a backup of"},
		{"r.jsonl.bak.12", "is a backup of"},
		{filepath.Join(dir, "other.jsonl"), ""},
		{filepath.Join(dir, "r.jsonl.bak.x"), ""},
		{filepath.Join(dir, "r.jsonl.sarif"), ""},
		{"-", ""},
	} {
		err := inputs.Check(tc.out)
		var ce *ConflictError
		switch {
		case tc.what == "" && err != nil:
			t.Errorf("Check(%s) = %v, want nil", tc.out, err)
		case tc.what != "" && !errors.As(err, &ce):
			t.Errorf("Check(%s) = %v, want a ConflictError", tc.out, err)
		case tc.what != "" && (ce.What != tc.what || ce.ExitCode() != 2):
			t.Errorf("Check(%s): %q exit %d, want %q exit 2", tc.out, ce.What, ce.ExitCode(), tc.what)
		}
	}
}

func TestCheckSeesThroughSymlinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	mustWrite(t, in, "{}\n", 0o644)
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(dir, alias); err != nil {
		t.Fatal(err)
	}
	var inputs Inputs
	inputs.Add(filepath.Join(alias, "r.jsonl"))
	if err := inputs.Check(filepath.Join(dir, "r.jsonl.quarantine.jsonl")); err == nil {
		t.Error("the quarantine of an input reached through a symlinked directory was not refused")
	}
}

func TestWriteThroughFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	got := filetest.ReadFIFO(fifo)
	writeString(t, fifo, Options{}, "report\n")
	select {
	case s := <-got:
		if s != "report\n" {
			t.Errorf("reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reader got nothing")
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	assertNoTemp(t, dir, "pipe")
}

func TestWriteThroughDevice(t *testing.T) {
	writeString(t, os.DevNull, Options{}, "gone\n")
	fi, err := os.Lstat(os.DevNull)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi.Mode(), err)
	}
}

func TestSymlinkKeptTargetReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	mustWrite(t, target, "old", 0o640)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	writeString(t, link, Options{}, "new")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	if s := readString(t, target); s != "new" {
		t.Errorf("target holds %q", s)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode %v, want 0640 kept", fi.Mode().Perm())
	}
	// A dangling link: its target is created.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("made.json", dangling); err != nil {
		t.Fatal(err)
	}
	writeString(t, dangling, Options{}, "x")
	if s := readString(t, filepath.Join(dir, "made.json")); s != "x" {
		t.Errorf("dangling target holds %q", s)
	}
	if fi, _ := os.Lstat(dangling); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the dangling symlink was replaced")
	}
}

func TestNewFilesHonourUmask(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		umask int
		perm  os.FileMode
		want  os.FileMode
	}{
		{0o022, 0, 0o644},
		{0o077, 0, 0o600},
		{0o002, 0, 0o664},
		{0o022, 0o600, 0o600},
	} {
		old := syscall.Umask(tc.umask)
		p := filepath.Join(dir, "r")
		os.Remove(p)
		writeString(t, p, Options{Perm: tc.perm}, "x")
		syscall.Umask(old)
		if fi, _ := os.Stat(p); fi.Mode().Perm() != tc.want {
			t.Errorf("umask %03o perm %v: mode %v, want %v", tc.umask, tc.perm, fi.Mode().Perm(), tc.want)
		}
	}
}

func TestReplaceKeepsMetadata(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.jsonl")
	mustWrite(t, p, "old", 0o600)
	xattr := unix.Setxattr(p, "user.rollout-test", []byte("kept"), 0) == nil
	if os.Geteuid() == 0 {
		if err := os.Chown(p, 1234, 5678); err != nil {
			t.Fatal(err)
		}
	}
	writeString(t, p, Options{}, "new")
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if st := fi.Sys().(*syscall.Stat_t); os.Geteuid() == 0 && (st.Uid != 1234 || st.Gid != 5678) {
		t.Errorf("owner %d:%d, want 1234:5678", st.Uid, st.Gid)
	}
	if xattr {
		buf := make([]byte, 16)
		n, err := unix.Getxattr(p, "user.rollout-test", buf)
		if err != nil || string(buf[:n]) != "kept" {
			t.Errorf("xattr lost: %q %v", buf[:n], err)
		}
	}
	assertNoTemp(t, dir, "r.jsonl")
}

func TestCopyFrom(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	mustWrite(t, src, "", 0o604)
	fi, _ := os.Stat(src)
	out := filepath.Join(dir, "out")
	writeString(t, out, Options{CopyFrom: fi}, "x")
	if got, _ := os.Stat(out); got.Mode().Perm() != 0o604 {
		t.Errorf("mode %v, want 0604", got.Mode().Perm())
	}
}

func TestFailedWriteLeavesTargetAlone(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	mustWrite(t, p, "old", 0o644)
	boom := errors.New("boom")
	err := Write(p, Options{}, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if s := readString(t, p); s != "old" {
		t.Errorf("target holds %q", s)
	}
	assertNoTemp(t, dir, "report.json")
}

func TestOpenExisting(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "q.jsonl")
	mustWrite(t, reg, "entry\n", 0o600)
	f, err := OpenExisting(reg)
	if err != nil || f == nil {
		t.Fatalf("regular file: %v", err)
	}
	b, _ := io.ReadAll(f) // blocking reads work again
	f.Close()
	if string(b) != "entry\n" {
		t.Errorf("read %q", b)
	}
	if f, err := OpenExisting(filepath.Join(dir, "absent")); f != nil || err != nil {
		t.Errorf("absent: %v %v", f, err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo, dir, os.DevNull} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenExisting(p)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			var ue *UnsafeError
			if !errors.As(err, &ue) || ue.ExitCode() != 4 {
				t.Errorf("OpenExisting(%s) = %v, want an UnsafeError", p, err)
			}
			if err := CheckRegularOrAbsent(p); !errors.As(err, &ue) {
				t.Errorf("CheckRegularOrAbsent(%s) = %v", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("OpenExisting(%s) hangs", p)
		}
	}
}

func assertNoTemp(t *testing.T, dir, base string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "."+base+".tmp*"))
	if len(matches) > 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

// TestPrepareThenCommit: Prepare fsyncs and sets the metadata but leaves
// the target as it was; Commit then only renames.
func TestPrepareThenCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	writeString(t, path, Options{}, "old\n")
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	io.WriteString(f, "new\n")
	if err := f.Prepare(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "old\n" {
		t.Fatalf("after Prepare the target is %q, want it untouched", got)
	}
	if fi, err := os.Stat(f.TempName()); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("prepared file: %v, %v; want the target's mode 0640", fi, err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "new\n" {
		t.Errorf("after Commit the target is %q", got)
	}
	if _, err := os.Stat(f.TempName()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file survived: %v", err)
	}
}
