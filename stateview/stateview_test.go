package stateview_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/stateview"
)

const fixture = "../fixtures/clean/envelope-paginated.jsonl"

func replay(t *testing.T, data string, hashed bool) *reconstruct.State {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o666); err != nil {
		t.Fatal(err)
	}
	st, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{Options: reconstruct.Options{HashItems: hashed}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func paths(cs []stateview.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Change+" "+c.Path)
	}
	return out
}

// Compare names each difference by its JSON path in the view, with both
// values and the item's lines; equal views give [], never nil.
func TestCompare(t *testing.T) {
	t.Parallel()
	data := read(t)
	a := stateview.Of(replay(t, data, false))
	if got := stateview.Compare(a, a); got == nil || len(got) != 0 {
		t.Fatalf("Compare of a view with itself = %#v, want []", got)
	}
	id := "msg_01a08452-99f2-7bcc-80bc-0003b54cda28"
	b := stateview.Of(replay(t, strings.Replace(data, id, "msg_01a08452-99f2-7bcc-80bc-0003b54cda29", 1), false))
	got := stateview.Compare(a, b)
	want := []stateview.Change{{Path: "history[0].id", Change: stateview.Changed, A: id, B: "msg_01a08452-99f2-7bcc-80bc-0003b54cda29", LineA: 4, LineB: 4}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	if n := stateview.CommonPrefix(a, b); n != 0 {
		t.Errorf("CommonPrefix = %d, want 0", n)
	}
	if n := stateview.CommonPrefix(a, a); n != len(a.History) || n == 0 {
		t.Errorf("CommonPrefix of a view with itself = %d, want %d", n, len(a.History))
	}
}

// Prove sees what a view shows (an item's content, without its hash) and
// what it does not (the engine's other state).
func TestProve(t *testing.T) {
	t.Parallel()
	data := read(t)
	a := replay(t, data, true)
	if got := stateview.Prove(a, replay(t, data, true)); len(got) != 0 {
		t.Fatalf("Prove of two replays of one file = %v", paths(got))
	}

	// The same ids, other content: history[N].content, values withheld.
	edited := replay(t, strings.Replace(data, "the haversine test fails near the poles", "the haversine test fails near the POLES", 1), true)
	got := stateview.Prove(a, edited)
	if len(got) != 1 || got[0].Path != "history[0].content" || got[0].A != nil || got[0].B != nil || got[0].LineA != 4 {
		t.Errorf("content change: %#v", got)
	}

	// A line of an unknown type changes no view, only the engine's count.
	extra := replay(t, data+`{"timestamp":"2026-09-09T05:00:00.000Z","ordinal":32,"type":"future_record","payload":{}}`+"\n", true)
	if c := stateview.Compare(stateview.OfHashed(a), stateview.OfHashed(extra)); len(c) != 0 {
		t.Fatalf("views differ: %v", paths(c))
	}
	got = stateview.Prove(a, extra)
	if s := strings.Join(paths(got), ", "); !strings.Contains(s, "changed Records") || !strings.Contains(s, "UnknownTypes") {
		t.Errorf("Prove = %s, want Records and UnknownTypes", s)
	}
}
