package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// -update rewrites the goldens of the structured formats (json, sarif,
// junit), which are also checked field by field below. The goldens of the
// line formats (text, jsonl, github, markdown) are written by hand and are
// never rewritten by the test.
var update = flag.Bool("update", false, "rewrite testdata/{json,sarif,junit,codeclimate}.golden")

// trickyMessage holds every character some format must escape.
const trickyMessage = "100% of <items> lack \"id\" | fields: a,b\nsecond line"

// sample is a normalized report: two files, one clean (with nil findings,
// which every printer must treat as empty), one finding of each severity.
func sample() *result.Report {
	return &result.Report{
		Tool:    "rollout",
		Version: "0.3.0-test",
		Command: "verify",
		Files: []result.FileResult{
			{
				Path:        "sessions/2025/rollout-a.jsonl",
				Records:     12,
				Era:         "envelope",
				HistoryMode: "legacy",
				CLIVersion:  "0.107.0",
				ThreadID:    "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
				FileFacts: result.FileFacts{RolloutID: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
					LineageRoot: "0199a1b2-0000-7000-8000-00000000000a", Turns: 3, Tokens: 48213, Compactions: 1},
				Size:      6144,
				Version:   "2026-03-10T09:35:30.123456789Z",
				DependsOn: []string{result.DependsClock},
				Findings: []checks.Finding{
					{
						Rule: "meta/old-cli", Severity: checks.Info,
						Path: "sessions/2025/rollout-a.jsonl", Line: 1, ByteOffset: 0,
						Message: "cli_version 0.50.0 predates turn ids",
					},
					{
						Rule: "ordinal/gap", Severity: checks.Error,
						Path: "sessions/2025/rollout-a.jsonl", Line: 3, ByteOffset: 512, Ordinal: ord(7),
						Message:  "ordinal jumps from 5 to 7",
						Evidence: map[string]any{"want": 6, "got": 7, "note": "a<b"},
					},
					{
						Rule: "item/missing-id", Severity: checks.Warning,
						Path: "sessions/2025/rollout-a.jsonl", Line: 9, ByteOffset: 4211,
						Message: trickyMessage, Fixable: true,
					},
				},
			},
			// An object: its version is the ETag, quotes included.
			{Path: "sessions/rollout-b.jsonl", Records: 6, Era: "legacy", Size: 2048, Version: `"9b2cf535f27731c974343645a3985328"`},
		},
	}
}

// testOptions make errors and warnings JUnit failures (--fail-on warning).
var testOptions = Options{FailOn: checks.Warning}

// noRules is an empty rule registry.
func noRules(string) (*checks.Rule, bool) { return nil, false }

// printerFor is lookup, except that the SARIF printer sees an empty
// registry: the real one is being filled while these tests are written.
func printerFor(t *testing.T, format string) Printer {
	t.Helper()
	if format == "sarif" {
		return sarifPrinter(noRules)
	}
	p, ok := lookup(format)
	if !ok {
		t.Fatalf("Lookup(%q) found no printer", format)
	}
	return p
}

func render(t *testing.T, format string, r *result.Report, o Options) string {
	t.Helper()
	p := printerFor(t, format)
	var buf bytes.Buffer
	if err := p(&buf, r, o); err != nil {
		t.Fatalf("%s printer: %v", format, err)
	}
	return buf.String()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format    string
		generated bool // golden may be rewritten by -update
	}{
		{format: "text"},
		{format: "jsonl"},
		{format: "github"},
		{format: "markdown"},
		{format: "json", generated: true},
		{format: "sarif", generated: true},
		{format: "junit", generated: true},
		{format: "codeclimate", generated: true},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			r := sample()
			got := render(t, tt.format, r, testOptions)
			golden := filepath.Join("testdata", tt.format+".golden")
			if *update && tt.generated {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s output mismatch (-%s +got):\n%s", tt.format, golden, diff)
			}
			if diff := cmp.Diff(sample(), r); diff != "" {
				t.Errorf("%s printer modified the report (-before +after):\n%s", tt.format, diff)
			}
			if again := render(t, tt.format, r, testOptions); again != got {
				t.Errorf("%s output differs between two runs", tt.format)
			}
		})
	}
}

func TestTextColor(t *testing.T) {
	t.Parallel()
	want := "sessions/2025/rollout-a.jsonl:1: \x1b[34minfo\x1b[0m: cli_version 0.50.0 predates turn ids [meta/old-cli]\n" +
		"sessions/2025/rollout-a.jsonl:3: \x1b[31merror\x1b[0m: ordinal jumps from 5 to 7 [ordinal/gap]\n" +
		"sessions/2025/rollout-a.jsonl:9: \x1b[33mwarning\x1b[0m: 100% of <items> lack \"id\" | fields: a,b\\nsecond line [item/missing-id]\n" +
		"2 files, 18 records: 1 errors, 1 warnings, 1 infos\n"
	if diff := cmp.Diff(want, render(t, "text", sample(), Options{Color: true, FailOn: checks.Warning})); diff != "" {
		t.Errorf("coloured text mismatch (-want +got):\n%s", diff)
	}
}

// TestColorOnlyText checks that Options.Color changes nothing but text.
func TestColorOnlyText(t *testing.T) {
	t.Parallel()
	for _, format := range Formats() {
		if format == "text" {
			continue
		}
		if plain, color := render(t, format, sample(), testOptions), render(t, format, sample(), Options{Color: true, FailOn: checks.Warning}); plain != color {
			t.Errorf("%s output depends on Options.Color", format)
		}
	}
}

// TestEdgeCases covers a whole-file finding (line 0), control characters and
// property escaping in paths, and a report without findings.
func TestEdgeCases(t *testing.T) {
	t.Parallel()
	odd := &result.Report{Tool: "rollout", Version: "1", Command: "verify", Files: []result.FileResult{{
		Path: "logs/a,b:c%.jsonl", Records: 0,
		Findings: []checks.Finding{
			{Rule: "file/empty", Severity: checks.Error, Line: 0, Message: "no records"},
			{Rule: "line/ctrl", Severity: checks.Warning, Line: 4, Message: "bad \x1b[2J byte\r\tend"},
		},
	}}}
	clean := &result.Report{Tool: "rollout", Command: "verify", Files: []result.FileResult{{Path: "a.jsonl", Records: 3}}}
	empty := &result.Report{Tool: "rollout", Command: "verify"}
	tests := []struct {
		name   string
		format string
		r      *result.Report
		want   string
	}{
		{"text odd", "text", odd,
			"logs/a,b:c%.jsonl: error: no records [file/empty]\n" +
				"logs/a,b:c%.jsonl:4: warning: bad \\x1b[2J byte\\r\tend [line/ctrl]\n" +
				"1 files, 0 records: 1 errors, 1 warnings, 0 infos\n"},
		{"github odd", "github", odd,
			"::error file=logs/a%2Cb%3Ac%25.jsonl,title=file/empty::no records\n" +
				"::warning file=logs/a%2Cb%3Ac%25.jsonl,line=4,title=line/ctrl::bad \\x1b[2J byte%0D\tend\n" + // the job log is a terminal
				"::notice title=rollout verify::1 files, 0 records: 1 errors, 1 warnings, 0 infos\n"},
		{"markdown odd", "markdown", odd,
			"1 files, 0 records: 1 errors, 1 warnings, 0 infos\n\n" +
				"| file | line | severity | rule | message |\n|---|---|---|---|---|\n" +
				"| logs/a,b:c%.jsonl |  | error | file/empty | no records |\n" +
				"| logs/a,b:c%.jsonl | 4 | warning | line/ctrl | bad \\x1b[2J byte<br>\tend |\n"},
		{"text clean", "text", clean, "1 files, 3 records: 0 errors, 0 warnings, 0 infos\n"},
		{"text empty", "text", empty, "0 files, 0 records: 0 errors, 0 warnings, 0 infos\n"},
		{"markdown clean", "markdown", clean, "1 files, 3 records: 0 errors, 0 warnings, 0 infos\n\nNo findings.\n"},
		{"markdown empty", "markdown", empty, "0 files, 0 records: 0 errors, 0 warnings, 0 infos\n\nNo findings.\n"},
		{"github clean", "github", clean, "::notice title=rollout verify::1 files, 3 records: 0 errors, 0 warnings, 0 infos\n"},
		{"jsonl clean", "jsonl", clean, ""},
		{"json empty", "json", empty,
			"{\n  \"schema\": \"verify-report\",\n  \"schema_version\": 1,\n  \"tool\": \"rollout\",\n  \"version\": \"\",\n  \"command\": \"verify\",\n" +
				"  \"summary\": {\n    \"files\": 0,\n    \"records\": 0,\n    \"errors\": 0,\n    \"warnings\": 0,\n    \"infos\": 0,\n" +
				"    \"not_analysed\": 0,\n    \"suppressed\": 0,\n    \"hidden\": 0\n  },\n" +
				"  \"notes\": [],\n  \"files\": []\n}\n"},
		{"junit empty", "junit", empty,
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
				"<testsuites name=\"rollout verify\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\"></testsuites>\n"},
		{"markdown escapes", "markdown", &result.Report{Files: []result.FileResult{{Path: `a|b.jsonl`, Findings: []checks.Finding{
			{Rule: "r/x", Line: 1, Message: `C:\dir a\|b & <i>x</i>` + "\r\ny"},
		}}}},
			"1 files, 0 records: 0 errors, 0 warnings, 1 infos\n\n" +
				"| file | line | severity | rule | message |\n|---|---|---|---|---|\n" +
				"| a\\|b.jsonl | 1 | info | r/x | C:\\\\dir a\\\\\\|b &amp; &lt;i&gt;x&lt;/i&gt;<br>y |\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, render(t, tt.format, tt.r, testOptions)); diff != "" {
				t.Errorf("%s output mismatch (-want +got):\n%s", tt.format, diff)
			}
		})
	}
}

func TestGitHubEscape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, data, property string
	}{
		{"plain/rule", "plain/rule", "plain/rule"},
		{"50%", "50%25", "50%25"},
		{"%0A", "%250A", "%250A"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"k: v, w", "k: v, w", "k%3A v%2C w"},
		{"::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"},
	}
	for _, tt := range tests {
		if got := githubData(tt.in); got != tt.data {
			t.Errorf("githubData(%q) = %q; want %q", tt.in, got, tt.data)
		}
		if got := githubProperty(tt.in); got != tt.property {
			t.Errorf("githubProperty(%q) = %q; want %q", tt.in, got, tt.property)
		}
	}
}

// TestJSONStructure decodes the json report and compares it with the schema
// of cli.md, independently of the golden file.
func TestJSONStructure(t *testing.T) {
	t.Parallel()
	out := render(t, "json", sample(), testOptions)

	var got any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json output does not decode: %v\n%s", err, out)
	}
	want := map[string]any{
		"schema":         "verify-report",
		"schema_version": 1.0,
		"tool":           "rollout",
		"version":        "0.3.0-test",
		"command":        "verify",
		"summary": map[string]any{"files": 2.0, "records": 18.0, "errors": 1.0, "warnings": 1.0, "infos": 1.0,
			"not_analysed": 0.0, "suppressed": 0.0, "hidden": 0.0},
		"notes": []any{},
		"files": []any{
			map[string]any{
				"path": "sessions/2025/rollout-a.jsonl", "records": 12.0, "era": "envelope", "history_mode": "legacy",
				"cli_version": "0.107.0", "thread_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
				"rollout_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "lineage_root": "0199a1b2-0000-7000-8000-00000000000a",
				"turns": 3.0, "tokens": 48213.0, "compactions": 1.0,
				"size": 6144.0, "version": "2026-03-10T09:35:30.123456789Z", "depends_on": []any{"clock"},
				"findings": []any{
					map[string]any{"rule": "meta/old-cli", "severity": "info", "line": 1.0, "byte_offset": 0.0, "ordinal": nil,
						"message": "cli_version 0.50.0 predates turn ids", "fixable": false, "evidence": map[string]any{}},
					map[string]any{"rule": "ordinal/gap", "severity": "error", "line": 3.0, "byte_offset": 512.0, "ordinal": 7.0,
						"message": "ordinal jumps from 5 to 7", "fixable": false,
						"evidence": map[string]any{"got": 7.0, "want": 6.0, "note": "a<b"}},
					map[string]any{"rule": "item/missing-id", "severity": "warning", "line": 9.0, "byte_offset": 4211.0, "ordinal": nil,
						"message": trickyMessage, "fixable": true, "evidence": map[string]any{}},
				},
			},
			map[string]any{
				"path": "sessions/rollout-b.jsonl", "records": 6.0, "era": "legacy", "history_mode": "",
				"cli_version": "", "thread_id": "", "rollout_id": "", "lineage_root": "",
				"turns": 0.0, "tokens": 0.0, "compactions": 0.0, "size": 2048.0, "version": `"9b2cf535f27731c974343645a3985328"`, "findings": []any{},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded json report mismatch (-want +got):\n%s", diff)
	}
	if schemaVersion != 1 {
		t.Errorf("SchemaVersion = %d; cli.md documents 1", schemaVersion)
	}

	// Key order is part of the contract (the schema reads top-down).
	for _, k := range []struct {
		path string
		keys []string
	}{
		{"@this", []string{"schema", "schema_version", "tool", "version", "command", "summary", "notes", "files"}},
		{"summary", []string{"files", "records", "errors", "warnings", "infos", "not_analysed", "suppressed", "hidden"}},
		{"files.0", []string{"path", "records", "era", "history_mode", "cli_version", "thread_id",
			"rollout_id", "lineage_root", "turns", "tokens", "compactions", "size", "version", "depends_on", "findings"}},
		{"files.0.findings.0", []string{"rule", "severity", "line", "byte_offset", "ordinal", "message", "fixable", "evidence"}},
	} {
		if diff := cmp.Diff(k.keys, objectKeys(t, gjson.Get(out, k.path))); diff != "" {
			t.Errorf("key order of %s (-want +got):\n%s", k.path, diff)
		}
	}

	for _, c := range []struct {
		desc string
		ok   bool
	}{
		{"two-space indent", strings.HasPrefix(out, "{\n  \"schema\": \"verify-report\",\n  \"schema_version\": 1,\n")},
		{"trailing newline", strings.HasSuffix(out, "}\n") && !strings.HasSuffix(out, "\n\n")},
		{"no HTML escaping", !strings.Contains(out, `\u003c`) && strings.Contains(out, `"a<b"`)},
		{"empty findings as []", strings.Contains(out, `"findings": []`)},
		{"no null slices", !strings.Contains(out, `"findings": null`) && !strings.Contains(out, `"evidence": null`)},
	} {
		if !c.ok {
			t.Errorf("json output: want %s:\n%s", c.desc, out)
		}
	}
}

func objectKeys(t *testing.T, v gjson.Result) []string {
	t.Helper()
	if !v.IsObject() {
		t.Fatalf("not an object: %s", v.Raw)
	}
	var keys []string
	v.ForEach(func(k, _ gjson.Result) bool {
		keys = append(keys, k.String())
		return true
	})
	return keys
}

func TestJSONLStructure(t *testing.T) {
	t.Parallel()
	out := render(t, "jsonl", sample(), testOptions)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("jsonl: %d lines; want 3:\n%s", len(lines), out)
	}
	wantRules := []string{"meta/old-cli", "ordinal/gap", "item/missing-id"}
	for i, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Fatalf("jsonl line %d is not JSON: %s", i+1, line)
		}
		keys := objectKeys(t, gjson.Parse(line))
		want := []string{"path", "rule", "severity", "line", "byte_offset", "ordinal", "message", "fixable", "evidence"}
		if diff := cmp.Diff(want, keys); diff != "" {
			t.Errorf("jsonl line %d keys (-want +got):\n%s", i+1, diff)
		}
		if got := gjson.Get(line, "rule").String(); got != wantRules[i] {
			t.Errorf("jsonl line %d rule = %q; want %q", i+1, got, wantRules[i])
		}
	}
	if got := gjson.Get(lines[2], "message").String(); got != trickyMessage {
		t.Errorf("jsonl message round trip = %q; want %q", got, trickyMessage)
	}
}

// TestNilEncodesEmpty checks that nil slices and maps print as [] and {}
// in the machine formats, without Normalize.
func TestNilEncodesEmpty(t *testing.T) {
	t.Parallel()
	withNils := &result.Report{Tool: "rollout", Command: "verify", Files: []result.FileResult{
		{Path: "a.jsonl", Findings: nil},
		{Path: "b.jsonl", Findings: []checks.Finding{{Rule: "r/x", Line: 1, Message: "m", Evidence: nil, Ordinal: nil}}},
	}}
	tests := []struct {
		format string
		r      *result.Report
		path   string
		want   string // raw JSON
	}{
		{"json", &result.Report{}, "files", "[]"},
		{"json", withNils, "files.0.findings", "[]"},
		{"json", withNils, "files.1.findings.0.evidence", "{}"},
		{"json", withNils, "files.1.findings.0.ordinal", "null"},
		{"jsonl", withNils, "evidence", "{}"},
		{"sarif", &result.Report{}, "runs.0.results", "[]"},
		{"sarif", &result.Report{}, "runs.0.tool.driver.rules", "[]"},
	}
	for _, tt := range tests {
		out := render(t, tt.format, tt.r, testOptions)
		v := gjson.Get(out, tt.path)
		if !v.Exists() {
			t.Errorf("%s: %s missing in:\n%s", tt.format, tt.path, out)
			continue
		}
		if v.Raw != tt.want {
			t.Errorf("%s: %s = %s; want %s", tt.format, tt.path, v.Raw, tt.want)
		}
	}
}

func TestSARIFStructure(t *testing.T) {
	t.Parallel()
	out := render(t, "sarif", sample(), testOptions)
	if !json.Valid([]byte(out)) {
		t.Fatalf("sarif output is not JSON:\n%s", out)
	}
	// The registry is empty in this test's eyes: every rule is described
	// generically and takes its level from its findings.
	tests := []struct {
		path string
		want string // raw JSON
	}{
		{"$schema", `"https://json.schemastore.org/sarif-2.1.0.json"`},
		{"version", `"2.1.0"`},
		{"runs.#", `1`},
		{"runs.0.tool.driver.name", `"rollout"`},
		{"runs.0.tool.driver.version", `"0.3.0-test"`},
		{"runs.0.tool.driver.rules.#.id", `["item/missing-id","meta/old-cli","ordinal/gap"]`},
		{"runs.0.tool.driver.rules.#.name", `["ItemMissingId","MetaOldCli","OrdinalGap"]`},
		{"runs.0.tool.driver.rules.#.defaultConfiguration.level", `["warning","note","error"]`},
		{"runs.0.tool.driver.rules.2.shortDescription.text", `"rollout rule ordinal/gap"`},
		{"runs.0.tool.driver.rules.2.fullDescription.text", "\"See `rollout explain ordinal/gap`.\""},
		{"runs.0.invocations", `[{"executionSuccessful": true, "toolExecutionNotifications": []}]`},
		{"runs.0.results.#", `3`},
		{"runs.0.results.#.ruleId", `["meta/old-cli","ordinal/gap","item/missing-id"]`},
		{"runs.0.results.#.ruleIndex", `[1,2,0]`},
		{"runs.0.results.#.level", `["note","error","warning"]`},
		{"runs.0.results.#.locations.0.physicalLocation.region.startLine", `[1,3,9]`},
		{"runs.0.results.1.locations.0.physicalLocation.artifactLocation.uri", `"sessions/2025/rollout-a.jsonl"`},
		{"runs.0.results.2.message.text", `"100% of <items> lack \"id\" | fields: a,b\nsecond line"`},
		// sha256 of "ordinal/gap\0sessions/2025/rollout-a.jsonl\0003\0ordinal jumps from 5 to 7\0", computed with sha256sum.
		{"runs.0.results.1.partialFingerprints", `{"rollout/v1": "c33c02845b774082449f60a38a9ede14eff12a0a6a9c92946f1431234eb94d1e"}`},
	}
	for _, tt := range tests {
		v := gjson.Get(out, tt.path)
		if !v.Exists() {
			t.Errorf("sarif: %s missing", tt.path)
			continue
		}
		if diff := cmp.Diff(compactJSON(t, tt.want), compactJSON(t, v.Raw)); diff != "" {
			t.Errorf("sarif: %s mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
	fps := gjson.Get(out, `runs.0.results.#.partialFingerprints.rollout/v1`).Array()
	seen := map[string]bool{}
	for _, fp := range fps {
		if len(fp.String()) != 64 || seen[fp.String()] {
			t.Errorf("sarif: fingerprint %q is not a fresh 64-digit hash (all: %v)", fp.String(), fps)
		}
		seen[fp.String()] = true
	}
	// The invocation says only whether every file was analysed: no start
	// or end time, no command line.
	for _, banned := range []string{"Time", "time\"", "commandLine"} {
		if strings.Contains(out, banned) {
			t.Errorf("sarif output contains %q; it must not depend on the clock", banned)
		}
	}
}

func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		t.Fatalf("compact %s: %v", s, err)
	}
	return buf.String()
}

// TestSARIFRegistered checks rules[] for registered rules through a fake
// registry, so that it does not depend on the real one.
func TestSARIFRegistered(t *testing.T) {
	t.Parallel()
	registry := map[string]*checks.Rule{
		"ordinal/gap":  {ID: "ordinal/gap", Severity: checks.Warning, Title: "Ordinals skip a value", Doc: "A gap means records were lost."},
		"meta/old-cli": {ID: "meta/old-cli", Severity: checks.Info, Title: "Old CLI version"},
	}
	lookup := func(id string) (*checks.Rule, bool) { r, ok := registry[id]; return r, ok }
	var buf bytes.Buffer
	if err := sarifPrinter(lookup)(&buf, sample(), testOptions); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	tests := []struct{ path, want string }{
		{"runs.0.tool.driver.rules.#.id", `["item/missing-id","meta/old-cli","ordinal/gap"]`},
		{"runs.0.tool.driver.rules.#.shortDescription.text", `["rollout rule item/missing-id","Old CLI version","Ordinals skip a value"]`},
		// No doc: the title stands in.
		{"runs.0.tool.driver.rules.#.fullDescription.text", "[\"See `rollout explain item/missing-id`.\",\"Old CLI version\",\"A gap means records were lost.\"]"},
		// The registry's default level, not the finding's.
		{"runs.0.tool.driver.rules.#.defaultConfiguration.level", `["warning","note","warning"]`},
		// Each result keeps its finding's own severity.
		{"runs.0.results.#.level", `["note","error","warning"]`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(compactJSON(t, tt.want), compactJSON(t, gjson.Get(out, tt.path).Raw)); diff != "" {
			t.Errorf("sarif: %s mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
}

// sarifOf prints r as SARIF (no registered rules) and decodes the log.
func sarifOf(t *testing.T, r *result.Report) sarifLog {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal([]byte(render(t, "sarif", r, testOptions)), &log); err != nil {
		t.Fatal(err)
	}
	return log
}

func TestSARIFDefaultLevelIsHighestSeverity(t *testing.T) {
	t.Parallel()
	r := &result.Report{Files: []result.FileResult{{Path: "a", Findings: []checks.Finding{
		{Rule: "r/x", Severity: checks.Info, Line: 1},
		{Rule: "r/x", Severity: checks.Warning, Line: 2},
		{Rule: "r/x", Severity: checks.Info, Line: 3},
		{Rule: "r/y", Severity: checks.Info, Line: 4},
	}}}}
	log := sarifOf(t, r)
	var got []string
	for _, rule := range log.Runs[0].Tool.Driver.Rules {
		got = append(got, rule.ID+"="+rule.DefaultConfiguration.Level)
	}
	if diff := cmp.Diff([]string{"r/x=warning", "r/y=note"}, got); diff != "" {
		t.Errorf("default levels (-want +got):\n%s", diff)
	}
	if log.Runs[0].Results[1].Locations[0].PhysicalLocation.Region.StartLine != 2 {
		t.Errorf("result 1 startLine = %d; want 2", log.Runs[0].Results[1].Locations[0].PhysicalLocation.Region.StartLine)
	}
	if r0 := sarifOf(t, &result.Report{Files: []result.FileResult{{Path: "a", Findings: []checks.Finding{{Rule: "r/x", Line: 0}}}}}); r0.Runs[0].Results[0].Locations[0].PhysicalLocation.Region != nil {
		t.Errorf("a whole-file finding (line 0) got a region; want none")
	}
}

func TestSARIFURI(t *testing.T) {
	t.Parallel()
	tests := []struct{ path, want string }{
		{"sessions/rollout-a.jsonl", "sessions/rollout-a.jsonl"},
		{"rollout-a.jsonl", "rollout-a.jsonl"},
		{"../x/rollout a.jsonl", "../x/rollout%20a.jsonl"},
		{"a:b/c.jsonl", "./a:b/c.jsonl"}, // a colon in the first segment would read as a scheme
		{"/home/u/.codex/sessions/r#1.jsonl", "file:///home/u/.codex/sessions/r%231.jsonl"},
		{"-", "-"},
	}
	for _, tt := range tests {
		if got := sarifURI(tt.path); got != tt.want {
			t.Errorf("sarifURI(%q) = %q; want %q", tt.path, got, tt.want)
		}
	}
}

func TestSARIFRuleName(t *testing.T) {
	t.Parallel()
	tests := []struct{ id, want string }{
		{"item/missing-id", "ItemMissingId"},
		{"ordinal/gap", "OrdinalGap"},
		{"x", "X"},
		{"a/b_c.d", "ABCD"},
	}
	for _, tt := range tests {
		if got := sarifRuleName(tt.id); got != tt.want {
			t.Errorf("sarifRuleName(%q) = %q; want %q", tt.id, got, tt.want)
		}
	}
}

// Test-local JUnit shapes, so that decoding does not reuse the printer's
// own types.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Cases    []xCase `xml:"testcase"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	ClassName string    `xml:"classname,attr"`
	Failure   *xFailure `xml:"failure"`
	Skipped   *struct{} `xml:"skipped"`
	SystemOut *string   `xml:"system-out"`
}

type xFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func TestJUnitStructure(t *testing.T) {
	t.Parallel()
	out := render(t, "junit", sample(), testOptions)
	if !strings.HasPrefix(out, `<?xml version="1.0" encoding="UTF-8"?>`+"\n") || !strings.HasSuffix(out, "</testsuites>\n") {
		t.Errorf("junit: want an XML declaration first and a trailing newline:\n%s", out)
	}
	var got xSuites
	if err := xml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("junit output does not decode: %v\n%s", err, out)
	}
	infoOut := "sessions/2025/rollout-a.jsonl:1: info: cli_version 0.50.0 predates turn ids [meta/old-cli]"
	const a = "sessions/2025/rollout-a.jsonl"
	want := xSuites{
		XMLName: xml.Name{Local: "testsuites"},
		Name:    "rollout verify", Tests: 4, Failures: 2, Errors: 0,
		Suites: []xSuite{
			{Name: a, Tests: 3, Failures: 2, Cases: []xCase{
				{Name: "meta/old-cli", ClassName: a, SystemOut: &infoOut},
				{Name: "ordinal/gap", ClassName: a, Failure: &xFailure{
					Message: "ordinal jumps from 5 to 7", Type: "error",
					Text: a + ":3: error: ordinal jumps from 5 to 7 [ordinal/gap]",
				}},
				{Name: "item/missing-id", ClassName: a, Failure: &xFailure{
					Message: trickyMessage, Type: "warning",
					Text: a + ":9: warning: " + trickyMessage + " [item/missing-id]",
				}},
			}},
			{Name: "sessions/rollout-b.jsonl", Tests: 1, Failures: 0, Cases: []xCase{
				{Name: "clean", ClassName: "sessions/rollout-b.jsonl"},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded junit mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(out, "<items>") || !strings.Contains(out, "&lt;items&gt;") {
		t.Errorf("junit: the message is not XML-escaped:\n%s", out)
	}
	if strings.Contains(out, "time=") || strings.Contains(out, "timestamp=") {
		t.Errorf("junit: output carries a time")
	}
}

// TestJUnitNamesStable: a case is named by its rule, never its line (a CI
// keeps a test's history by name), and a rule's repeats in a file by their
// order, so lines moved by an edit keep the names.
func TestJUnitNamesStable(t *testing.T) {
	t.Parallel()
	names := func(lines ...int) []string {
		r := &result.Report{Tool: "rollout", Command: "verify", Files: []result.FileResult{{Path: "a.jsonl"}}}
		for _, l := range lines {
			r.Files[0].Findings = append(r.Files[0].Findings, checks.Finding{Rule: "item/missing-id", Severity: checks.Warning, Path: "a.jsonl", Line: l, Message: "m"})
		}
		var got xSuites
		if err := xml.Unmarshal([]byte(render(t, "junit", r, testOptions)), &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range got.Suites[0].Cases {
			out = append(out, c.Name)
		}
		return out
	}
	want := []string{"item/missing-id", "item/missing-id (2)"}
	if got := names(9, 12); !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
	if got := names(19, 22); !slices.Equal(got, want) {
		t.Errorf("after an edit moved the lines: names %q, want %q", got, want)
	}
}

var errWrite = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteError(t *testing.T) {
	t.Parallel()
	for _, format := range Formats() {
		p := printerFor(t, format)
		err := p(failingWriter{}, sample(), testOptions)
		if !errors.Is(err, errWrite) {
			t.Errorf("%s printer on a failing writer: err = %v; want it to wrap %v", format, err, errWrite)
		}
	}
}

func TestEncodeError(t *testing.T) {
	t.Parallel()
	r := &result.Report{Files: []result.FileResult{{Path: "a", Findings: []checks.Finding{
		{Rule: "r/ok", Line: 1, Message: "fine"},
		{Rule: "r/nan", Line: 2, Message: "m", Evidence: map[string]any{"ratio": math.NaN()}},
	}}}}
	tests := []struct {
		format string
		want   string // what is written before the error
	}{
		{"json", ""}, // all or nothing
		{"jsonl", `{"path":"a","rule":"r/ok","severity":"info","line":1,"byte_offset":0,"ordinal":null,"message":"fine","fixable":false,"evidence":{}}` + "\n"},
	}
	for _, tt := range tests {
		p := printerFor(t, tt.format)
		var buf bytes.Buffer
		if err := p(&buf, r, testOptions); err == nil {
			t.Errorf("%s printer with NaN evidence: no error", tt.format)
		}
		if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
			t.Errorf("%s output before the error (-want +got):\n%s", tt.format, diff)
		}
	}
}

// TestSARIFUsesRegistry checks that the sarif format of lookup describes
// the rules of checks.Lookup, whatever the registry holds (possibly
// nothing), and a generic description for an id it does not hold.
func TestSARIFUsesRegistry(t *testing.T) {
	t.Parallel()
	const unknown = "zz-test/not-a-rule"
	if _, ok := checks.Lookup(unknown); ok {
		t.Fatalf("%s is registered", unknown)
	}
	f := result.FileResult{Path: "a.jsonl"}
	want := map[string]string{unknown: "rollout rule " + unknown}
	for _, rule := range checks.Rules() {
		f.Findings = append(f.Findings, checks.Finding{Rule: rule.ID, Line: 1, Message: "m"})
		want[rule.ID] = "rollout rule " + rule.ID
		if rule.Title != "" {
			want[rule.ID] = rule.Title
		}
	}
	f.Findings = append(f.Findings, checks.Finding{Rule: unknown, Line: 2, Message: "m"})
	p, ok := lookup("sarif")
	if !ok {
		t.Fatal("no sarif printer")
	}
	var buf bytes.Buffer
	if err := p(&buf, &result.Report{Files: []result.FileResult{f}}, testOptions); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, rule := range gjson.Get(buf.String(), "runs.0.tool.driver.rules").Array() {
		got[rule.Get("id").String()] = rule.Get("shortDescription.text").String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sarif rules[] short descriptions (-want +got):\n%s", diff)
	}
}
