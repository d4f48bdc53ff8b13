package stateview_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/stateview"
)

// The dynamic-tools golden of real Codex 0.171.0: the thread declared
// conformance_lookup at thread/start, then compacted. Cut before the
// compaction the set is session_meta's; whole, the checkpoint's; a
// checkpoint that says the set is empty empties it.
func TestDynamicToolsView(t *testing.T) {
	files, _ := filepath.Glob("../../testkit/conformance/testdata/0.171.0/dynamic-tools/session/sessions/*/*/*/*.jsonl")
	if len(files) != 1 {
		t.Fatalf("want the dynamic-tools golden's rollout, found %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	ckpt := -1
	for i, l := range lines {
		if strings.Contains(l, `"type":"compacted"`) {
			ckpt = i
		}
	}
	if ckpt < 0 {
		t.Fatal("no compacted record in the golden")
	}
	emptied := strings.Join(lines[:ckpt], "") + strings.Replace(lines[ckpt], `"tools":[{"type":"function","name":"conformance_lookup"`, `"tools":[],"was":[{"type":"function","name":"conformance_lookup"`, 1)
	for _, tc := range []struct {
		name, data, source string
		line               int
		names              []string
	}{
		{"before the compaction", strings.Join(lines[:ckpt], ""), "session_meta", 1, []string{"conformance_lookup"}},
		{"whole file", string(b), "compacted.resume_metadata", ckpt + 1, []string{"conformance_lookup"}},
		{"a checkpoint with no tools", emptied, "compacted.resume_metadata", ckpt + 1, []string{}},
	} {
		v := stateview.Of(replay(t, tc.data, false))
		d := v.DynamicTools
		if d == nil {
			t.Fatalf("%s: no dynamic tools", tc.name)
		}
		if d.Source != tc.source || d.Line != tc.line || strings.Join(d.Names, ",") != strings.Join(tc.names, ",") {
			t.Errorf("%s: %s line %d %v; want %s line %d %v", tc.name, d.Source, d.Line, d.Names, tc.source, tc.line, tc.names)
		}
		var specs []map[string]any
		if err := json.Unmarshal(d.Tools, &specs); err != nil || len(specs) != len(tc.names) {
			t.Errorf("%s: tools %s", tc.name, d.Tools)
		}
	}
	// Compare sees a changed tool set.
	a := stateview.Of(replay(t, string(b), false))
	c := stateview.Of(replay(t, emptied, false))
	found := false
	for _, ch := range stateview.Compare(a, c) {
		found = found || strings.HasPrefix(ch.Path, "dynamic_tools")
	}
	if !found {
		t.Errorf("Compare does not report the emptied tool set: %v", paths(stateview.Compare(a, c)))
	}
}

// A file without dynamic tools has no dynamic_tools member at all (the
// JSON of `rollout state` is unchanged for it).
func TestNoDynamicTools(t *testing.T) {
	v := stateview.Of(replay(t, read(t), false))
	b, _ := json.Marshal(v)
	if v.DynamicTools != nil || strings.Contains(string(b), `"dynamic_tools"`) {
		t.Errorf("dynamic tools %+v in a file without any", v.DynamicTools)
	}
}
