//go:build linux

package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestMakeParents: mkdir -p of an output's directory, 0777 less the
// umask, through a symlink to a directory; refused through a file or a
// symlink to nothing, naming it.
func TestMakeParents(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o027)
	err := MakeParents(filepath.Join(dir, "reports", "shard", "verify-1.json"))
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"reports", "reports/shard"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: %v, %v; want a directory 0750 (0777 less the umask 027)", d, fi.Mode(), err)
		}
	}
	if err := MakeParents(filepath.Join(dir, "reports", "verify-2.json")); err != nil {
		t.Errorf("an existing directory: %v", err)
	}
	if err := MakeParents("verify.json"); err != nil {
		t.Errorf("the working directory: %v", err)
	}

	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "linked"))
	if err := MakeParents(filepath.Join(dir, "linked", "sub", "v.json")); err != nil {
		t.Errorf("through a symlink to a directory: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "real", "sub")); err != nil || !fi.IsDir() {
		t.Errorf("real/sub: %v", err)
	}

	mustWrite(t, filepath.Join(dir, "file"), "", 0o644)
	os.Symlink("nowhere", filepath.Join(dir, "gone"))
	for _, tc := range []struct{ output, dir, reason string }{
		{"file/v.json", "file", "is not a directory"},
		{"file/a/b/v.json", "file", "is not a directory"},
		{"gone/v.json", "gone", "is a symbolic link to nothing"},
		{"gone/a/v.json", "gone", "is a symbolic link to nothing"},
	} {
		err := MakeParents(filepath.Join(dir, tc.output))
		de := (*DirError)(nil)
		if !errors.As(err, &de) || de.Dir != filepath.Join(dir, tc.dir) || !strings.HasPrefix(de.Reason, tc.reason) {
			t.Errorf("%s: %v; want %s %s", tc.output, err, tc.dir, tc.reason)
		}
	}
	if !Absent(filepath.Join(dir, "nowhere")) {
		t.Error("a directory was made where the dangling symlink points")
	}
}

// TestMakeParentsConcurrently: shards started together share reports/.
func TestMakeParentsConcurrently(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = MakeParents(filepath.Join(dir, "a", "b", "c", "v.json")) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}

// TestErrorsNameTheOutput: what failed is said with the path the caller
// gave, or its directory, never the temporary file made beside it.
func TestErrorsNameTheOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "missing", "verify.json")
	_, err := Create(out, Options{})
	de := (*DirError)(nil)
	if !errors.As(err, &de) || de.Dir != filepath.Join(dir, "missing") || de.Reason != "does not exist" {
		t.Errorf("Create in a missing directory: %v", err)
	}

	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		_, err := Create(filepath.Join(ro, "verify.json"), Options{})
		if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), filepath.Join(ro, "verify.json")) {
			t.Errorf("Create in a read-only directory: %v", err)
		}
	}

	f, err := Create(filepath.Join(dir, "v.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.OS().Close() // every later write and the commit fail
	if _, err := f.Write([]byte("x")); err == nil || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("Write: %v", err)
	}
	if err := f.Commit(); err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), "v.json") {
		t.Errorf("Commit: %v", err)
	}
}
