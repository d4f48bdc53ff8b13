//go:build unix

package filetest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Flock takes an exclusive flock on path (created with its directory), as
// Codex holds its writer and maintenance locks; the file is closed at the
// end of the test at the latest.
func Flock(t testing.TB, path string) *os.File {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
