//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepairDocsStoreOwner runs the session docs/repair.md shows under
// "What the store requires of its owner" in a home laid out as it says
// (~ a new directory, the home uid 1000's, the store planted by nobody,
// 0777) and compares what rollout prints and its exit code.
func TestRepairDocsStoreOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving directories to other users needs root (the suite runs as root in CI)")
	}
	doc, err := os.ReadFile("../../docs/repair.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### What the store requires of its owner\n")
	if !ok {
		t.Fatal("docs/repair.md has no section on the store's owner")
	}
	blocks := fencedBlocks(section)
	if len(blocks) == 0 {
		t.Fatal("the section shows no session")
	}
	lines := strings.Split(strings.TrimSuffix(blocks[0].text, "\n"), "\n")
	cmd, ok := strings.CutPrefix(lines[0], "$ rollout ")
	if !ok || !strings.HasPrefix(lines[len(lines)-1], "[exit ") {
		t.Fatalf("not a session: %q", blocks[0].text)
	}

	tilde := t.TempDir()
	home := filepath.Join(tilde, ".codex")
	args := strings.Fields(strings.ReplaceAll(cmd, "~", tilde))
	file := args[len(args)-1]
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	rollout := `{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90","timestamp":"2026-03-10T09:35:29.981Z","cwd":"/srv/ledger","originator":"codex_cli_rs","cli_version":"0.110.0","source":"cli","model_provider":"openai"}}` + "\n"
	if err := os.WriteFile(file, []byte(rollout), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(home, "rollout-artifacts")
	os.Mkdir(store, 0o700)
	for _, c := range []struct {
		dir string
		uid int
	}{{home, 1000}, {store, 65534}} {
		if err := os.Chown(c.dir, c.uid, c.uid); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(store, 0o777)

	io, stdout, stderr := testIO("")
	code := run(args, io)
	got := strings.ReplaceAll(stdout.String()+stderr.String(), tilde, "~") + fmt.Sprintf("[exit %d]", code)
	if want := strings.Join(lines[1:], "\n"); got != want {
		t.Errorf("rollout %s prints\n%s\nbut docs/repair.md shows\n%s", cmd, got, want)
	}
	if b, _ := os.ReadFile(file); string(b) != rollout {
		t.Error("the refused repair changed the file")
	}
}
