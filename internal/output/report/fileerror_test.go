package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// withFileError is a report with one file that could not be read, one that
// was, and a note: every format must show the first, so that an unreadable
// file never looks clean.
func withFileError() *result.Report {
	return &result.Report{
		Tool: "rollout", Version: "1", Command: "verify",
		Notes: []string{"empty/: no rollout files"},
		Files: []result.FileResult{
			{Path: "s/rollout-a.jsonl", Error: &result.FileError{Code: result.ErrPermission, Message: "open: permission denied"}},
			{Path: "s/rollout-b.jsonl", Records: 2, Findings: []checks.Finding{
				{Rule: "item/missing-id", Severity: checks.Warning, Line: 2, Message: "no id"},
			}},
		},
	}
}

func TestFileErrorInEveryFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format string
		want   string // the whole output
	}{
		{"text", "s/rollout-a.jsonl: error: not analysed: open: permission denied [permission-denied]\n" +
			"s/rollout-b.jsonl:2: warning: no id [item/missing-id]\n" +
			"note: empty/: no rollout files\n" +
			"2 files, 2 records: 0 errors, 1 warnings, 0 infos; 1 files not analysed\n"},
		{"github", "::error file=s/rollout-a.jsonl,title=not analysed%3A permission-denied::not analysed: open: permission denied\n" +
			"::warning file=s/rollout-b.jsonl,line=2,title=item/missing-id::no id\n" +
			"::notice title=rollout::empty/: no rollout files\n" +
			"::notice title=rollout verify::2 files, 2 records: 0 errors, 1 warnings, 0 infos; 1 files not analysed\n"},
		{"markdown", "2 files, 2 records: 0 errors, 1 warnings, 0 infos; 1 files not analysed\n\n" +
			"- note: empty/: no rollout files\n\n" +
			"| file | line | severity | rule | message |\n|---|---|---|---|---|\n" +
			"| s/rollout-a.jsonl |  | error | not analysed: permission-denied | open: permission denied |\n" +
			"| s/rollout-b.jsonl | 2 | warning | item/missing-id | no id |\n"},
		{"jsonl", `{"path":"s/rollout-a.jsonl","error":{"code":"permission-denied","message":"open: permission denied"}}` + "\n" +
			`{"path":"s/rollout-b.jsonl","rule":"item/missing-id","severity":"warning","line":2,"byte_offset":0,"ordinal":null,"message":"no id","fixable":false,"evidence":{}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, render(t, tt.format, withFileError(), testOptions)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFileErrorStructured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format string
		path   string
		want   string // raw JSON
	}{
		{"json", "summary.not_analysed", `1`},
		{"json", "notes", `["empty/: no rollout files"]`},
		{"json", "files.0.error", `{"code":"permission-denied","message":"open: permission denied"}`},
		{"json", "files.0.findings", `[]`},
		{"sarif", "runs.0.invocations.0.executionSuccessful", `false`},
		{"sarif", "runs.0.invocations.0.toolExecutionNotifications", `[
			{"level":"error","message":{"text":"s/rollout-a.jsonl: not analysed: open: permission denied"},
			 "locations":[{"physicalLocation":{"artifactLocation":{"uri":"s/rollout-a.jsonl"}}}],
			 "descriptor":{"id":"permission-denied"}},
			{"level":"note","message":{"text":"empty/: no rollout files"}}]`},
		{"sarif", "runs.0.results.#", `1`},
	}
	for _, tt := range tests {
		out := render(t, tt.format, withFileError(), testOptions)
		v := gjson.Get(out, tt.path)
		if !v.Exists() {
			t.Errorf("%s: %s missing", tt.format, tt.path)
			continue
		}
		if diff := cmp.Diff(compactJSON(t, tt.want), compactJSON(t, v.Raw)); diff != "" {
			t.Errorf("%s: %s mismatch (-want +got):\n%s", tt.format, tt.path, diff)
		}
	}
	if out := render(t, "json", sample(), testOptions); gjson.Get(out, "files.0.error").Exists() {
		t.Errorf("json: an analysed file has an error field:\n%s", out)
	}
}

func TestJUnitFileErrorAndFailOn(t *testing.T) {
	t.Parallel()
	out := render(t, "junit", withFileError(), testOptions)
	for _, want := range []string{
		`<testsuites name="rollout verify" tests="2" failures="1" errors="1" skipped="0">`,
		`<testsuite name="s/rollout-a.jsonl" tests="1" failures="0" errors="1" skipped="0">`,
		`<testcase name="not analysed" classname="s/rollout-a.jsonl">`,
		`<error message="open: permission denied" type="permission-denied">s/rollout-a.jsonl: not analysed: open: permission denied</error>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("junit output lacks %s:\n%s", want, out)
		}
	}

	// Only findings at or above --fail-on are failures; the others are
	// passing cases that keep the finding in <system-out>.
	for _, tt := range []struct {
		failOn           checks.Severity
		failures, passed int
	}{
		{checks.Info, 3, 0},
		{checks.Warning, 2, 1},
		{checks.Error, 1, 2},
		{NeverFail, 0, 3},
	} {
		out := render(t, "junit", sample(), Options{FailOn: tt.failOn})
		if want := fmt.Sprintf(`<testsuites name="rollout verify" tests="4" failures="%d"`, tt.failures); !strings.Contains(out, want) {
			t.Errorf("fail-on %v: want %s:\n%s", tt.failOn, want, out)
		}
		if got := strings.Count(out, "<system-out>"); got != tt.passed {
			t.Errorf("fail-on %v: %d findings in <system-out>, want %d:\n%s", tt.failOn, got, tt.passed, out)
		}
	}
}

// TestCodeClimate checks the fields GitLab reads, independently of the
// golden file.
func TestCodeClimate(t *testing.T) {
	t.Parallel()
	out := render(t, "codeclimate", withFileError(), testOptions)
	for _, tt := range []struct{ path, want string }{
		{"#", `2`},
		{"#.check_name", `["not-analysed/permission-denied","item/missing-id"]`},
		{"#.severity", `["critical","minor"]`},
		{"#.location.path", `["s/rollout-a.jsonl","s/rollout-b.jsonl"]`},
		{"#.location.lines.begin", `[1,2]`},
		{"1.description", `"no id"`},
	} {
		if diff := cmp.Diff(compactJSON(t, tt.want), compactJSON(t, gjson.Get(out, tt.path).Raw)); diff != "" {
			t.Errorf("codeclimate: %s mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
	for _, fp := range gjson.Get(out, "#.fingerprint").Array() {
		if len(fp.String()) != 64 {
			t.Errorf("codeclimate: fingerprint %q is not a sha256", fp)
		}
	}
	if got := render(t, "codeclimate", &result.Report{}, testOptions); got != "[]\n" {
		t.Errorf("codeclimate of an empty report = %q, want []", got)
	}
}
