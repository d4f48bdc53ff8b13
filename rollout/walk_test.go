//go:build unix

package rollout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// walkTree makes a tree with a rollout, a FIFO and a dangling symlink named
// like rollouts, and a symlink to the FIFO.
func walkTree(t *testing.T) (root string, j func(string) string) {
	t.Helper()
	root = t.TempDir()
	j = func(p string) string { return filepath.Join(root, p) }
	for _, p := range []string{"s/a/rollout-1.jsonl", "s/b/rollout-2.jsonl", "s/c/rollout-3.jsonl"} {
		writeFile(t, j(p), []byte("{}\n"))
	}
	if err := syscall.Mkfifo(j("s/a/rollout-fifo.jsonl"), 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	for link, target := range map[string]string{
		"s/a/rollout-dangling.jsonl": "nowhere.jsonl",
		"s/b/rollout-tofifo.jsonl":   "../a/rollout-fifo.jsonl",
		"s/b/rollout-linked.jsonl":   "../c/rollout-3.jsonl",
		"s/b/loop":                   "..",
	} {
		if err := os.Symlink(target, j(link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, j
}

func walkErrPaths(es []*WalkError) []string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Path)
	}
	return ps
}

// TestWalkSkipsNonRegular: FIFOs and dangling links named like rollouts
// are reported and not opened (opening a FIFO would hang), and the walk
// goes on (issue 11).
func TestWalkSkipsNonRegular(t *testing.T) {
	t.Parallel()
	root, j := walkTree(t)
	d, err := Discover([]string{j("s")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{j("s/a/rollout-1.jsonl"), j("s/b/rollout-2.jsonl"), j("s/b/rollout-linked.jsonl"), j("s/c/rollout-3.jsonl")}
	if diff := cmp.Diff(want, d.Paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	wantBad := []string{j("s/a/rollout-dangling.jsonl"), j("s/a/rollout-fifo.jsonl"), j("s/b/rollout-tofifo.jsonl")}
	if diff := cmp.Diff(wantBad, walkErrPaths(d.Unusable)); diff != "" {
		t.Errorf("unusable (-want +got):\n%s", diff)
	}
	if !errors.Is(d.Unusable[0], fs.ErrNotExist) || !errors.Is(d.Unusable[1], ErrNotRegular) {
		t.Errorf("errors: %v; %v", d.Unusable[0], d.Unusable[1])
	}
	_ = root
}

// TestWalkFollowsSymlinkedRoot: a symlinked sessions directory is walked,
// and the paths keep the name given.
func TestWalkFollowsSymlinkedRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "real/2026/rollout-1.jsonl"), []byte("{}\n"))
	link := filepath.Join(root, "sessions")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	d, err := Discover([]string{link})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(link, "2026/rollout-1.jsonl")}, d.Paths); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestWalkGoesOnAfterUnreadable: a directory that cannot be read is
// reported and the rest of the tree is still walked. (Injected: as root
// every directory is readable.)
func TestWalkGoesOnAfterUnreadable(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	j := func(p string) string { return filepath.Join(root, p) }
	for _, p := range []string{"a/rollout-1.jsonl", "b/rollout-2.jsonl", "c/rollout-3.jsonl"} {
		writeFile(t, j(p), []byte("{}\n"))
	}
	w := walker{stat: os.Stat, readDir: func(dir string) ([]fs.DirEntry, error) {
		if dir == j("b") {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
		}
		return os.ReadDir(dir)
	}}
	w.walk(root)
	if diff := cmp.Diff([]string{j("a/rollout-1.jsonl"), j("c/rollout-3.jsonl")}, w.found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if len(w.unusable) != 1 || w.unusable[0].Path != j("b") || !errors.Is(w.unusable[0], fs.ErrPermission) {
		t.Errorf("unusable = %v, want %s: permission denied", w.unusable, j("b"))
	}
}

// TestWalkUnreadableDirectory does the same with real permissions when
// not running as root.
func TestWalkUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory; TestWalkGoesOnAfterUnreadable covers it")
	}
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a/rollout-1.jsonl"), []byte("{}\n"))
	writeFile(t, filepath.Join(root, "b/rollout-2.jsonl"), []byte("{}\n"))
	if err := os.Chmod(filepath.Join(root, "b"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(root, "b"), 0o755)
	d, err := Discover([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Paths) != 1 || len(d.Unusable) != 1 {
		t.Errorf("paths %v, unusable %v", d.Paths, d.Unusable)
	}
}
