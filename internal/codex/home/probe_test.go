package home

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNotAHome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		make    []string // entries to create, "/" suffix: a directory
		wantErr string   // "" for a home
	}{
		{"empty directory", nil, "is not a Codex home: it has no sessions/, no archived_sessions/ and no state_N.sqlite"},
		{"unrelated files", []string{"notes.txt", "src/"}, "is not a Codex home"},
		{"sessions/ as a file", []string{"sessions"}, "is not a Codex home"},
		{"sessions/", []string{"sessions/"}, ""},
		{"archived_sessions/ only", []string{"archived_sessions/"}, ""},
		{"state database only", []string{"state_5.sqlite"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, e := range c.make {
				p := filepath.Join(dir, strings.TrimSuffix(e, "/"))
				var err error
				if strings.HasSuffix(e, "/") {
					err = os.Mkdir(p, 0o755)
				} else {
					err = os.WriteFile(p, nil, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			err := New(dir).NotAHome()
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("NotAHome() = %v, want nil", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("NotAHome() = %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
	if err := New(filepath.Join(t.TempDir(), "nosuch")).NotAHome(); err == nil {
		t.Error("NotAHome() of a missing directory = nil")
	}
}
