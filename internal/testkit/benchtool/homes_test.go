package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/rollout"
)

// TestHomesGen generates a small home twice: the same rollouts both times,
// as many as asked, each session_meta naming the thread its file name
// carries, and a threads row per thread pointing at a file of the home.
func TestHomesGen(t *testing.T) {
	const n = 40
	args := []string{"-rollouts", "40", "-median", "30KB", "-max", "200KB"}
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := cmdHomesGen(append([]string{"-o", d}, args...)); err != nil {
			t.Fatal(err)
		}
	}
	files := func(dir string) map[string][]byte {
		paths, err := expandInputs([]string{homeDir(dir, n)})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, p := range paths {
			rel, _ := filepath.Rel(homeDir(dir, n), p)
			if out[rel], err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != n {
		t.Fatalf("%d rollouts, want %d", len(fa), n)
	}
	threads := map[string]bool{}
	grown := 0
	for rel, data := range fa {
		if !bytes.Equal(data, fb[rel]) {
			t.Errorf("%s differs between two runs with the same options", rel)
		}
		id, ok := rollout.ThreadIDFromName(rel)
		first, _, _ := bytes.Cut(data, []byte("\n"))
		if !ok || !bytes.Contains(first, []byte(`"id":"`+id+`"`)) {
			t.Errorf("%s: session_meta does not name thread %s: %.200s", rel, id, first)
		}
		threads[id] = true
		if bytes.Contains(data, []byte(`-2"`)) {
			grown++
		}
	}
	if grown == 0 {
		t.Error("no rollout grew to its drawn size")
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(homeDir(a, n), "state_5.sqlite")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, rollout_path FROM threads`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var id, path string
		if err := rows.Scan(&id, &path); err != nil {
			t.Fatal(err)
		}
		seen++
		if !threads[id] || !strings.Contains(path, id) {
			t.Errorf("threads row %s -> %s: not a thread of the home's files", id, path)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("threads row %s: %v", id, err)
		}
	}
	if seen != len(threads) {
		t.Errorf("%d threads rows, want one per thread (%d)", seen, len(threads))
	}
}
