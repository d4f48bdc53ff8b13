package home

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/rollout"
)

func TestFindThread(t *testing.T) {
	const (
		a = "019cd719-fabd-7808-8020-00009e3779b2"
		b = "019cd800-1111-7222-8333-444455556666"
	)
	dir := t.TempDir()
	h := New(dir)
	put := func(rel, id string) string {
		p := filepath.Join(dir, rel)
		meta := `{"timestamp":"2026-03-10T09:35:30.000Z","type":"session_meta","payload":{"id":"` + id + `"}}` + "\n"
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	older := put("sessions/2026/03/10/rollout-2026-03-10T09-35-30-"+a+".jsonl", a)
	newer := put("archived_sessions/rollout-2026-03-11T10-00-00-"+a+".jsonl", a)
	other := put("sessions/2026/03/11/rollout-2026-03-11T10-00-00-"+b+".jsonl", b)

	if got, want := h.RolloutDirs(), []string{filepath.Join(dir, "sessions"), filepath.Join(dir, "archived_sessions")}; !cmp.Equal(got, want) {
		t.Errorf("RolloutDirs = %q, want %q", got, want)
	}
	paths := func(ms []rollout.ThreadMatch) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Path)
		}
		return out
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{a, []string{older, newer}},
		{"019CD7", []string{older, newer}}, // a prefix, in either case
		{"019cd", []string{older, other, newer}},
		{"0000ffff", nil},
	} {
		got, err := h.FindThread(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, paths(got)); diff != "" {
			t.Errorf("FindThread(%q) (-want +got):\n%s", tt.query, diff)
		}
	}

	ms, _ := h.FindThread(a)
	if cur, ok := Current(ms); !ok || cur != newer {
		t.Errorf("Current of one thread = %q, %v; want the newest name %q", cur, ok, newer)
	}
	ms, _ = h.FindThread("019cd")
	if cur, ok := Current(ms); ok {
		t.Errorf("Current of two threads = %q, want none", cur)
	}
}
