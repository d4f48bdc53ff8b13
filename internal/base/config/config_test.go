package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`# comment
select: [ordinal/, item/missing-id]
ignore:
  - line/blank
per-path-ignores:
  "archived_sessions/**": [tokens/]
fail-on: warning
show-severity: warning
max-line-bytes: 1024
handoff-cap: 8000
max-findings-per-rule: 50
format: [text, sarif=out/r.sarif]
baseline: .rollout-baseline.json
`))
	if err != nil {
		t.Fatal(err)
	}
	n, h, m := int64(1024), int64(8000), 50
	want := &Config{
		Select: []string{"ordinal/", "item/missing-id"}, Ignore: []string{"line/blank"},
		PerPathIgnores: map[string][]string{"archived_sessions/**": {"tokens/"}},
		FailOn:         "warning", ShowSeverity: "warning", MaxLineBytes: &n, HandoffCap: &h, MaxFindingsPerRule: &m,
		Format: []string{"text", "sarif=out/r.sarif"}, Baseline: ".rollout-baseline.json",
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ doc, want string }{
		{"select: [a/]\nfail_on: warning\n", `line 2: unknown key "fail_on"; did you mean "fail-on"?`},
		{"selct: [a/]\n", `line 1: unknown key "selct"; did you mean "select"?`},
		{"colour: always\n", `line 1: unknown key "colour" (the keys are: select, ignore, per-path-ignores,`},
		{"max-line-bytes: lots\n", `line 1: max-line-bytes: "lots" is not a number`},
		{"select: [item/]\nselect: [line/]\n", "line 2: select is given twice (first on line 1)"},
		{"ignore: {a: b}\n", "line 1: ignore: want a list ([a, b]), not a mapping"},
		{"- select\n", "line 1: want keys and values (select: ...), not a list"},
		{"per-path-ignores:\n  \"[\": [x/]\n", `bad glob "["`},
		{"select: [\n", "line 1: did not find expected node content"},
	} {
		_, err := Parse([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tt.doc, err, tt.want)
		}
	}
	if c, err := Parse([]byte("# nothing yet\n")); err != nil || c.Select != nil {
		t.Errorf("Parse(comment only) = %+v, %v; want an empty config", c, err)
	}
}

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		glob, name string
		want       bool
	}{
		{"archived_sessions/**", "archived_sessions/2025/01/rollout-a.jsonl", true},
		{"archived_sessions/**", "sessions/rollout-a.jsonl", false},
		{"**/rollout-2025-*.jsonl", "s/2025/rollout-2025-01.jsonl", true},
		{"**/rollout-2025-*.jsonl", "rollout-2025-01.jsonl", true},
		{"rollout-2025-*.jsonl", "deep/down/rollout-2025-01.jsonl", true},
		{"s/*.jsonl", "s/a/b.jsonl", false},
		{"s/*/b.jsonl", "s/a/b.jsonl", true},
		{"s/**/b.jsonl", "s/b.jsonl", true},
		{"s/**/b.jsonl", "s/x/y/b.jsonl", true},
		{"s/**/b.jsonl", "t/b.jsonl", false},
	} {
		if got := matchGlob(tt.glob, tt.name); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tt.glob, tt.name, got, tt.want)
		}
	}
}

func TestFindAndIgnoredAt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o777); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, FileName)
	if err := os.WriteFile(cfgPath, []byte("per-path-ignores:\n  a/**: [line/]\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	got, err := Find(sub)
	if err != nil || got != cfgPath {
		t.Fatalf("Find(%s) = %q, %v; want %q", sub, got, err, cfgPath)
	}
	c, err := Load(got)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IgnoredAt(filepath.Join(sub, "rollout-x.jsonl")); !cmp.Equal(got, []string{"line/"}) {
		t.Errorf("IgnoredAt(inside a/) = %v, want [line/]", got)
	}
	if got := c.IgnoredAt(filepath.Join(root, "rollout-x.jsonl")); got != nil {
		t.Errorf("IgnoredAt(outside a/) = %v, want none", got)
	}
	if got := c.Resolve("r.sarif"); got != filepath.Join(root, "r.sarif") {
		t.Errorf("Resolve(r.sarif) = %q", got)
	}
	if got, err := Find(t.TempDir()); err != nil || got != "" {
		t.Errorf("Find(no config) = %q, %v; want none", got, err)
	}
}
