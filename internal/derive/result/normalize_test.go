package result

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
)

func ord(n int64) *int64 { return &n }

// normalizeCase is a report before and after Normalize.
type normalizeCase struct {
	name string
	in   Report
	want Report
}

// fileCases are the cases about the files of a report.
func fileCases() []normalizeCase {
	return []normalizeCase{
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
	}
}

// findingCases are the cases about the findings of one file.
func findingCases() []normalizeCase {
	return []normalizeCase{
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
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tt := range append(fileCases(), findingCases()...) {
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
