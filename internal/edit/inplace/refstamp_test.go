package inplace

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A stamp vouches for a tree of directories only while none of them
// changed, and never for a change within a tick of the stamp.
func TestDirStamp(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sessions := filepath.Join(root, "sessions")
	day := filepath.Join(sessions, "2026", "12", "02")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, "rollout-a.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	age := func() {
		for _, d := range []string{sessions, filepath.Dir(filepath.Dir(day)), filepath.Dir(day), day} {
			if err := os.Chtimes(d, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	archived := filepath.Join(root, "archived_sessions") // absent
	roots := []string{sessions, archived}

	if stampDirs(roots, true).unchanged() {
		t.Error("a tree changed just now is vouched for")
	}
	age()
	s := stampDirs(roots, true)
	if !s.unchanged() {
		t.Fatal("an untouched tree is not vouched for")
	}
	if err := os.WriteFile(filepath.Join(day, "rollout-b.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if s.unchanged() {
		t.Error("a file made in a day directory went unseen")
	}
	age()
	s = stampDirs(roots, true)
	if err := os.Mkdir(archived, 0o755); err != nil {
		t.Fatal(err)
	}
	if s.unchanged() {
		t.Error("a root made after the stamp went unseen")
	}
	if err := os.Symlink(day, filepath.Join(sessions, "link")); err != nil {
		t.Fatal(err)
	}
	age()
	if stampDirs(roots, true).unchanged() {
		t.Error("a tree with a symlink in it is vouched for")
	}
}
