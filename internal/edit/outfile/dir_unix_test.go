//go:build unix

package outfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/outfile"
)

// TestDirNeverFollowsLinks: Sub refuses a symlinked directory, and
// CreateIn a symlinked entry; what is made in a Dir stays in the directory
// that was opened after its path is swapped for a symlink elsewhere.
func TestDirNeverFollowsLinks(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Symlink(elsewhere, filepath.Join(root, "link"))
	os.Symlink(filepath.Join(elsewhere, "victim"), filepath.Join(root, "store", "entry"))

	top, err := outfile.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var ue *outfile.UnsafeError
	if _, err := top.Sub("link"); !errors.As(err, &ue) || ue.Kind != "symbolic link" {
		t.Errorf("Sub of a symlink: %v", err)
	}
	store, err := top.Sub("store")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := outfile.CreateIn(store, "entry", outfile.Options{}); !errors.As(err, &ue) {
		t.Errorf("CreateIn over a symlink: %v", err)
	}

	// The store is moved and its name made a symlink: writes follow the
	// directory opened, not the name.
	os.Rename(filepath.Join(root, "store"), filepath.Join(root, "moved"))
	os.Symlink(elsewhere, filepath.Join(root, "store"))
	if err := outfile.WriteIn(store, "record", outfile.Options{Perm: 0o600}, func(w io.Writer) error {
		_, err := io.WriteString(w, "kept\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "moved", "record")); err != nil || string(b) != "kept\n" {
		t.Errorf("the record is not in the directory opened: %q %v", b, err)
	}
	if es, _ := os.ReadDir(elsewhere); len(es) != 0 {
		t.Errorf("written through the swapped name: %v", es)
	}
	if store.RemoveSelf() {
		t.Error("RemoveSelf removed a directory no longer where it was opened")
	}
}
