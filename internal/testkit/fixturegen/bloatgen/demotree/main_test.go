package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDemoTree: the tree of the README's space and reclaim tour is three
// rollouts (a parent and two sub-agents), made only in a new directory.
func TestDemoTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := build(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "2026")); err != nil {
		t.Errorf("DIR is not the sessions tree: %v", err)
	}
	files, size := 0, int64(0)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			files, size = files+1, size+fi.Size()
		}
		return err
	})
	// 467.9 KiB: the size the README's `rollout space` shows.
	if files != 3 || size < 467*1024 || size > 468*1024 {
		t.Errorf("%d files, %d bytes; want 3 files of 467.9 KiB", files, size)
	}
	if err := build(dir); err == nil {
		t.Error("build over an existing directory succeeded")
	}
}
