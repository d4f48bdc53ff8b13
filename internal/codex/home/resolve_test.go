package home

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestResolver pins what the cached resolver gives for each kind of path
// component: plain, a linked directory, a linked file, a dangling link and
// a missing tail, asked twice so that the second answer comes from the
// cache of directories.
func TestResolver(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	t.Parallel()
	// The temporary directory may itself lie behind a link (macOS /var).
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "real")
	must(t, os.MkdirAll(filepath.Join(real, "day"), 0o755))
	must(t, os.WriteFile(filepath.Join(real, "day", "a.jsonl"), nil, 0o644))
	must(t, os.Symlink(real, filepath.Join(root, "link")))
	must(t, os.Symlink(filepath.Join(real, "day", "a.jsonl"), filepath.Join(root, "file-link")))
	must(t, os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "dangling")))
	must(t, os.Symlink(filepath.Join(root, "link", "day"), filepath.Join(real, "day-link")))

	rs := newResolver()
	for _, c := range []struct{ path, want string }{
		{"real/day/a.jsonl", "real/day/a.jsonl"},
		{"link/day/a.jsonl", "real/day/a.jsonl"},
		{"link/day/../day/a.jsonl", "real/day/a.jsonl"},
		{"link/day-link/a.jsonl", "real/day/a.jsonl"},
		{"file-link", "real/day/a.jsonl"},
		{"link/day/missing.jsonl", "real/day/missing.jsonl"},
		{"link/missing/deeper/x.jsonl", "real/missing/deeper/x.jsonl"},
		{"dangling", "dangling"},
		{"dangling/x.jsonl", "dangling/x.jsonl"},
		{"link", "real"},
	} {
		want := filepath.Join(root, c.want)
		for round := range 2 {
			if got := rs.resolve(filepath.Join(root, c.path)); got != want {
				t.Errorf("round %d: resolve(%s) = %s, want %s", round, c.path, got, want)
			}
		}
		if got := resolve(filepath.Join(root, c.path)); got != want {
			t.Errorf("uncached resolve(%s) = %s, want %s", c.path, got, want)
		}
	}
	if !inside(filepath.Join(root, "link"), filepath.Join(real, "day", "a.jsonl")) {
		t.Errorf("a file under the target of a linked directory is not inside it")
	}
	if inside(filepath.Join(root, "link"), filepath.Join(root, "file-link")+"x") {
		t.Errorf("a missing file beside the directory is inside it")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
