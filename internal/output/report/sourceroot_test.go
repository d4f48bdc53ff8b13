package report

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWorkTreeOf(t *testing.T) {
	t.Parallel()
	mk := func(t *testing.T, root string, files map[string]string) {
		t.Helper()
		for name, body := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if body == "/" {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name     string
		files    map[string]string // "/": a directory
		ceiling  string            // relative to the temporary root ("": none)
		wantRoot string            // relative to the temporary root
	}{
		{"empty .git above: not a work tree", map[string]string{".git": "/", "a/b": "/"}, "", "a/b"},
		{".git with HEAD above", map[string]string{"a/.git/HEAD": "ref: refs/heads/main\n", "a/b": "/"}, "", "a"},
		{"worktree's .git file", map[string]string{"a/.git": "gitdir: /elsewhere/.git/worktrees/a\n", "a/b": "/"}, "", "a"},
		{".git file that is not a link", map[string]string{"a/.git": "notes\n", "a/b": "/"}, "", "a/b"},
		{"the nearest wins", map[string]string{"a/.git/HEAD": "x", "a/b/.git/HEAD": "x", "a/b/c": "/"}, "", "a/b"},
		{"the directory itself", map[string]string{"a/.git/HEAD": "x"}, "", "a"},
		{"not above the ceiling", map[string]string{"a/.git/HEAD": "x", "a/b/c": "/"}, "a", "a/b/c"},
		{"below the ceiling", map[string]string{"a/b/.git/HEAD": "x", "a/b/c": "/"}, "a", "a/b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			mk(t, root, c.files)
			// Where the test starts: the deepest directory named.
			start := root
			for name, body := range c.files {
				d := filepath.Join(root, name)
				if body != "/" || filepath.Base(name) == ".git" {
					d = filepath.Dir(d)
					if filepath.Base(d) == ".git" {
						d = filepath.Dir(d)
					}
				}
				if len(d) > len(start) {
					start = d
				}
			}
			// Above the temporary root is not the test's: the ceiling,
			// unless the case names one.
			ceilings := []string{filepath.Dir(root)}
			if c.ceiling != "" {
				ceilings = []string{"relative/ignored", filepath.Join(root, c.ceiling)}
			}
			if got, want := WorkTreeOf(start, ceilings), filepath.Join(root, c.wantRoot); got != want {
				t.Errorf("WorkTreeOf(%s) = %s, want %s", start, got, want)
			}
		})
	}
}
