package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
)

func ord(n int64) *int64 { return &n }

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Report
		want Report
	}{
		{
			name: "nil slices become empty",
			in:   Report{Tool: "rollout"},
			want: Report{Tool: "rollout", Files: []FileResult{}},
		},
		{
			name: "nil findings become empty",
			in:   Report{Files: []FileResult{{Path: "a"}}},
			want: Report{Files: []FileResult{{Path: "a", Findings: []checks.Finding{}}}},
		},
		{
			name: "files sorted by path, same path kept in order",
			in: Report{Files: []FileResult{
				{Path: "b/x.jsonl", Records: 1},
				{Path: "a/z.jsonl", Records: 2},
				{Path: "b/x.jsonl", Records: 3},
				{Path: "a.jsonl", Records: 4},
			}},
			want: Report{Files: []FileResult{
				{Path: "a.jsonl", Records: 4, Findings: []checks.Finding{}},
				{Path: "a/z.jsonl", Records: 2, Findings: []checks.Finding{}},
				{Path: "b/x.jsonl", Records: 1, Findings: []checks.Finding{}},
				{Path: "b/x.jsonl", Records: 3, Findings: []checks.Finding{}},
			}},
		},
		{
			name: "findings sorted by line, offset, rule, message",
			in: Report{Files: []FileResult{{Path: "f", Findings: []checks.Finding{
				{Path: "f", Line: 10, ByteOffset: 900, Rule: "a/a", Message: "m"},
				{Path: "f", Line: 2, ByteOffset: 50, Rule: "z/z", Message: "b"},
				{Path: "f", Line: 2, ByteOffset: 50, Rule: "z/z", Message: "a"},
				{Path: "f", Line: 2, ByteOffset: 50, Rule: "a/b", Message: "z"},
				{Path: "f", Line: 2, ByteOffset: 40, Rule: "z/z", Message: "z"},
				{Path: "f", Line: 1, ByteOffset: 0, Rule: "z/z", Message: "z"},
			}}}},
			want: Report{Files: []FileResult{{Path: "f", Findings: []checks.Finding{
				{Path: "f", Line: 1, ByteOffset: 0, Rule: "z/z", Message: "z"},
				{Path: "f", Line: 2, ByteOffset: 40, Rule: "z/z", Message: "z"},
				{Path: "f", Line: 2, ByteOffset: 50, Rule: "a/b", Message: "z"},
				{Path: "f", Line: 2, ByteOffset: 50, Rule: "z/z", Message: "a"},
				{Path: "f", Line: 2, ByteOffset: 50, Rule: "z/z", Message: "b"},
				{Path: "f", Line: 10, ByteOffset: 900, Rule: "a/a", Message: "m"},
			}}}},
		},
		{
			name: "exact duplicates dropped, near duplicates kept",
			in: Report{Files: []FileResult{{Path: "f", Findings: []checks.Finding{
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Warning, Evidence: map[string]any{"a": 1, "b": 2}},
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Warning, Evidence: map[string]any{"b": 2, "a": 1}},
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Error, Evidence: map[string]any{"a": 1, "b": 2}},
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Warning, Evidence: map[string]any{"a": 1, "b": 3}},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(4)},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(4), Evidence: map[string]any{}},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(5)},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m"},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(4)},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(4), Fixable: true},
			}}}},
			want: Report{Files: []FileResult{{Path: "f", Findings: []checks.Finding{
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Error, Evidence: map[string]any{"a": 1, "b": 2}},
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Warning, Evidence: map[string]any{"a": 1, "b": 2}},
				{Path: "f", Line: 3, Rule: "r/x", Message: "m", Severity: checks.Warning, Evidence: map[string]any{"a": 1, "b": 3}},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m"},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(4)},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(4), Fixable: true},
				{Path: "f", Line: 5, Rule: "r/y", Message: "m", Ordinal: ord(5)},
			}}}},
		},
		{
			name: "empty finding path takes the file's path",
			in: Report{Files: []FileResult{{Path: "f", Findings: []checks.Finding{
				{Line: 2, Rule: "r/x", Message: "m"},
				{Path: "f", Line: 2, Rule: "r/x", Message: "m"},
				{Line: 1, Rule: "r/x", Message: "m"},
			}}}},
			want: Report{Files: []FileResult{{Path: "f", Findings: []checks.Finding{
				{Path: "f", Line: 1, Rule: "r/x", Message: "m"},
				{Path: "f", Line: 2, Rule: "r/x", Message: "m"},
			}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.in
			got.Normalize()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
			got.Normalize()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("second Normalize() changed the report (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	r := Report{Files: []FileResult{
		{Path: "a", Records: 10, Findings: []checks.Finding{
			{Severity: checks.Error}, {Severity: checks.Error}, {Severity: checks.Warning}, {Severity: checks.Info},
		}},
		{Path: "b", Records: 5},
		{Path: "c", Records: 0, Findings: []checks.Finding{{Severity: checks.Info}, {Severity: checks.Info}, {Severity: checks.Info}}},
	}}
	want := Summary{Files: 3, Records: 15, Errors: 2, Warnings: 1, Infos: 4}
	if diff := cmp.Diff(want, r.Summary()); diff != "" {
		t.Errorf("Summary() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Summary{}, (&Report{}).Summary()); diff != "" {
		t.Errorf("empty Summary() mismatch (-want +got):\n%s", diff)
	}
}

func TestFormatsAndLookup(t *testing.T) {
	t.Parallel()
	want := []string{"text", "json", "jsonl", "sarif", "junit", "codeclimate", "github", "markdown", "html"}
	got := Formats()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Formats() mismatch (-want +got):\n%s", diff)
	}
	got[0] = "changed"
	if Formats()[0] != "text" {
		t.Errorf("Formats() shares its slice with the caller")
	}
	for _, name := range want {
		if p, ok := lookup(name); !ok || p == nil {
			t.Errorf("Lookup(%q) = %v, %v; want a printer", name, p, ok)
		}
	}
	for _, name := range []string{"", "JSON", "xml", "text ", "sarif=x"} {
		if _, ok := lookup(name); ok {
			t.Errorf("Lookup(%q) found a printer; want none", name)
		}
	}
}

func TestParseFormatSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec       string
		wantFormat string
		wantFile   string
		wantErr    string // substring; "" for no error
	}{
		{spec: "text", wantFormat: "text"},
		{spec: "json", wantFormat: "json"},
		{spec: "sarif=out/report.sarif", wantFormat: "sarif", wantFile: "out/report.sarif"},
		{spec: "junit=dir/a=b.xml", wantFormat: "junit", wantFile: "dir/a=b.xml"},
		{spec: "markdown=-", wantFormat: "markdown", wantFile: "-"},
		{spec: "", wantErr: "missing format name"},
		{spec: "=out.json", wantErr: "missing format name"},
		{spec: "json=", wantErr: `missing file name after "="`},
		{spec: "xml", wantErr: `unknown format "xml" (want text, json, jsonl, sarif, junit, codeclimate, github, markdown or html)`},
		{spec: "JSON", wantErr: `unknown format "JSON"`},
		{spec: " json", wantErr: `unknown format " json"`},
		{spec: "xml=out.xml", wantErr: `unknown format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			format, file, err := ParseFormatSpec(tt.spec)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseFormatSpec(%q) = %q, %q, nil; want an error containing %q", tt.spec, format, file, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ParseFormatSpec(%q) error = %q; want it to contain %q", tt.spec, err, tt.wantErr)
				}
				if format != "" || file != "" {
					t.Errorf("ParseFormatSpec(%q) = %q, %q with an error; want empty values", tt.spec, format, file)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFormatSpec(%q) error: %v", tt.spec, err)
			}
			if format != tt.wantFormat || file != tt.wantFile {
				t.Errorf("ParseFormatSpec(%q) = %q, %q; want %q, %q", tt.spec, format, file, tt.wantFormat, tt.wantFile)
			}
		})
	}
}
