package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// rawControl is a byte or rune a terminal would act on.
var rawControl = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f]|\u0080|[\u0081-\u009f]|[\u202a-\u202e]")

// TestFileNamesAreEscaped: a file name is anyone's bytes. One holding an
// OSC title write, BEL, a CSI and a bidirectional override reaches the
// terminal escaped from every command that prints it: the repair plan and
// its "wrote" line, both undos, find, artifacts and the errors.
func TestFileNamesAreEscaped(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sessions", "2026", "03", "10")
	os.MkdirAll(dir, 0o755)
	const id = "019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90"
	name := "rollout-\x1b]0;pwned\x07\x1b[2J\u202e-" + id + ".jsonl"
	path := filepath.Join(dir, name)
	os.WriteFile(path, filetest.BrokenRollout(t, 20_000), 0o644)
	t.Setenv("CODEX_HOME", root)
	for _, args := range [][]string{
		{"repair", path},
		{"repair", "--write", path},
		{"artifacts", root},
		{"repair", "--undo", path},
		{"find", id},
		{"reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path},
		{"reclaim", "--undo", path},
		{"repair", path + "\x1b[31m.missing"},
		{"reclaim", "--undo", path + "\x1b[31m.missing"},
	} {
		code, stdout, stderr := runRollout(args...)
		if m := rawControl.FindString(stdout + stderr); m != "" {
			t.Errorf("rollout %q (exit %d) printed %q raw:\n%s%s", args[:len(args)-1], code, m, stdout, stderr)
		}
	}
}
