package home

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("state_5.sqlite", 4096)
	write("state_5.sqlite-wal", 552112)
	write("logs_2.sqlite", 1<<20)
	write("notes.txt", 99) // not Codex's state
	write("rollout-migrations/01a2334d-969a-7e00-8a86-b43f7987c86f.pending", 10)
	write("sessions/2026/12/01/.rollout-2026-12-01T20-30-52-01a2334d-969a-7e00-8a86-b43f7987c86f.jsonl.paginated.tmp", 300)
	u := New(dir).Usage()
	var kinds []string
	for _, f := range u.Files {
		rel, _ := filepath.Rel(dir, f.Path)
		kinds = append(kinds, f.Kind+" "+rel)
	}
	want := []string{"database logs_2.sqlite", "wal state_5.sqlite-wal", "database state_5.sqlite",
		"staged-migration sessions/2026/12/01/.rollout-2026-12-01T20-30-52-01a2334d-969a-7e00-8a86-b43f7987c86f.jsonl.paginated.tmp",
		"migration-journal rollout-migrations/01a2334d-969a-7e00-8a86-b43f7987c86f.pending"}
	if len(kinds) != len(want) {
		t.Fatalf("files %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("file %d: %s, want %s", i, kinds[i], want[i])
		}
	}
	if u.Bytes != 4096+552112+1<<20+10+300 {
		t.Errorf("bytes %d", u.Bytes)
	}
	if b, _ := u.Biggest(); filepath.Base(b.Path) != "logs_2.sqlite" {
		t.Errorf("biggest %s", b.Path)
	}
	if !IsHome(dir) {
		t.Error("a directory with state_5.sqlite is a home")
	}
}
