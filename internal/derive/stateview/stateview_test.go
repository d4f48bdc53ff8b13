package stateview_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/reconstruct"
)

const fixture = "../../../fixtures/clean/envelope-paginated.jsonl"

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

	// An item of an unknown type is left out of the history: the view
	// says where, Compare does not count it, Prove does.
	leftOut := replay(t, data+`{"timestamp":"2026-09-09T05:00:00.000Z","ordinal":32,"type":"response_item","payload":{"type":"future_item"}}`+"\n", true)
	v := stateview.OfHashed(leftOut)
	if want := (&stateview.LeftOut{Count: 1, Items: []stateview.LeftOutItem{{Line: 33, Type: "future_item"}}}); !cmp.Equal(v.LeftOut, want) {
		t.Errorf("LeftOut = %+v, want %+v", v.LeftOut, want)
	}
	if c := stateview.Compare(stateview.OfHashed(a), v); len(c) != 0 {
		t.Errorf("views differ: %v", paths(c))
	}
	if s := strings.Join(paths(stateview.Prove(a, leftOut)), ", "); !strings.Contains(s, "LeftOut") {
		t.Errorf("Prove = %s, want LeftOut", s)
	}
	if stateview.OfHashed(a).LeftOut != nil {
		t.Error("a clean file's view has left_out")
	}
}

// compactLocal is the rollout Codex 0.171 wrote in the conformance
// matrix's compact-local scenario (a compaction with resume_metadata, then
// a turn_context written again after it), cut right after the compaction
// when cut is set: the settings resume restores then come from the
// compaction's resume_metadata; edit, when set, changes that line.
func compactLocal(t *testing.T, cut bool, edit func(string) string) (data string, compaction int) {
	t.Helper()
	paths, _ := filepath.Glob("../../testkit/conformance/testdata/0.171.0/compact-local/session/sessions/*/*/*/rollout-*.jsonl")
	if len(paths) != 1 {
		t.Fatalf("the 0.171.0 compact-local golden: %v", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"type":"compacted"`) && strings.Contains(l, `"resume_metadata":`) {
			compaction = i + 1
			if edit != nil {
				lines[i] = edit(l)
			}
			if cut {
				lines = lines[:i+1]
			}
			return strings.Join(lines, ""), compaction
		}
	}
	t.Fatal("no compaction with resume_metadata in the golden")
	return "", 0
}

// TestSettingsFromResumeMetadata: the settings resume restores come from
// the newest turn_context, unless a compaction after it carries
// resume_metadata; then each of its fields is taken as it is, a null too
// (Codex's CompactionResumeMetadata: "authoritative, including an
// intentionally absent value"). state, diff and reclaim's proof compare
// them.
func TestSettingsFromResumeMetadata(t *testing.T) {
	setNull := func(field string) func(string) string {
		return func(l string) string {
			i := strings.Index(l, `"`+field+`":`)
			if i < 0 {
				t.Fatalf("no %s in the compaction", field)
			}
			start := i + len(field) + 3
			end := start + len(valueAt(l[start:]))
			return l[:start] + "null" + l[end:]
		}
	}
	full, _ := compactLocal(t, false, nil)
	cut, line := compactLocal(t, true, nil)
	absent, _ := compactLocal(t, true, setNull("previous_turn_settings"))
	noMetadata, _ := compactLocal(t, true, func(l string) string {
		i := strings.Index(l, `,"resume_metadata":`)
		return l[:i] + l[i+len(`,"resume_metadata":`)+len(valueAt(l[i+len(`,"resume_metadata":`):])):]
	})

	for _, tc := range []struct {
		name, data, source, previous string
		fromCompaction               bool
	}{
		{"whole file: the turn_context after the compaction", full, reconstruct.SettingsFromTurnContext, `{"model":"gpt-5","comp_hash":null,"realtime_active":false}`, false},
		{"cut after the compaction", cut, reconstruct.SettingsFromResumeMetadata, `{"model":"gpt-5","comp_hash":null,"realtime_active":false}`, true},
		{"previous_turn_settings null: none", absent, reconstruct.SettingsFromResumeMetadata, `null`, true},
		{"a compaction without resume_metadata", noMetadata, reconstruct.SettingsFromTurnContext, `{"model":"gpt-5","comp_hash":null,"realtime_active":false}`, false},
	} {
		v := stateview.Of(replay(t, tc.data, false))
		s := v.Settings
		if s == nil {
			t.Fatalf("%s: no settings", tc.name)
		}
		if s.Source != tc.source || string(s.PreviousTurnSettings) != tc.previous || (s.Line == line) != tc.fromCompaction {
			t.Errorf("%s: settings from %s (line %d) %s; want %s %s (compaction on line %d)", tc.name, s.Source, s.Line, s.PreviousTurnSettings, tc.source, tc.previous, line)
		}
		if tc.fromCompaction && (string(s.MultiAgentVersion) != `"v1"` || !strings.HasPrefix(string(s.LastStartedTurnID), `"`)) {
			t.Errorf("%s: multi_agent_version %s, last_started_turn_id %s", tc.name, s.MultiAgentVersion, s.LastStartedTurnID)
		}
	}

	// An intentionally absent value is a difference, for diff and for
	// reclaim's proof alike.
	want := []string{"changed settings.previous_turn_settings"}
	if got := paths(stateview.Compare(stateview.Of(replay(t, cut, false)), stateview.Of(replay(t, absent, false)))); !cmp.Equal(got, want) {
		t.Errorf("Compare: %v, want %v", got, want)
	}
	if got := paths(stateview.Prove(replay(t, cut, true), replay(t, absent, true))); !cmp.Equal(got, want) {
		t.Errorf("Prove: %v, want %v", got, want)
	}
}

// valueAt is the JSON value at the start of s.
func valueAt(s string) string {
	depth, inStr := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
				if depth == 0 {
					return s[:i+1]
				}
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return s[:i+1]
			}
		case depth == 0 && (c == ',' || c == '}'):
			return s[:i]
		}
	}
	return s
}
