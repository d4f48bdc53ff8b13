package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rollout-dev/rollout/checks"
)

// The JSON Schema of the verify report is a published contract: real
// reports, in every shape a run can give (findings of each rule area,
// files not analysed, notes, statistics, a baseline), must validate against
// it with an independent JSON Schema implementation.
const reportSchema = "../../docs/schema/verify-report.v1.json"

func compileReportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(reportSchema)
	if err != nil {
		t.Fatalf("compile %s: %v", reportSchema, err)
	}
	return sch
}

func validateReport(sch *jsonschema.Schema, report []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(report))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func TestVerifyReportSchema(t *testing.T) {
	t.Parallel()
	sch := compileReportSchema(t)

	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sessions, 0o777); err != nil {
		t.Fatal(err)
	}
	legacy, err := os.ReadFile("testdata/legacy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sessions, "rollout-a.jsonl"), legacy, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.jsonl", filepath.Join(sessions, "rollout-gone.jsonl")); err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(dir, "baseline.json")

	for _, args := range [][]string{
		{"../../fixtures"},                                  // every fixture: each rule area, every era
		{"--statistics", "../../fixtures/demo"},             // statistics
		{sessions, filepath.Join(dir, "empty")},             // a file not analysed, a note
		{"--write-baseline", baseline, sessions},            // suppressed
		{"--show-severity", "error", "../../fixtures/demo"}, // hidden
		{"testdata/clean.jsonl"},                            // clean
	} {
		io, stdout, stderr := testIO("")
		run(append([]string{"verify", "--format", "json", "--fail-on", "never"}, args...), io)
		if !json.Valid(stdout.Bytes()) {
			t.Fatalf("verify %v: not a JSON report:\n%s\n%s", args, stdout, stderr)
		}
		if err := validateReport(sch, stdout.Bytes()); err != nil {
			t.Errorf("verify %v: the report does not follow %s:\n%v", args, reportSchema, err)
		}
	}
}

// TestVerifyReportSchemaRejects proves the schema can fail: reports with a
// field missing, renamed or of the wrong type are invalid.
func TestVerifyReportSchemaRejects(t *testing.T) {
	t.Parallel()
	sch := compileReportSchema(t)
	io, stdout, _ := testIO("")
	run([]string{"verify", "--format", "json", "../../fixtures/demo"}, io)
	good := stdout.String()
	if err := validateReport(sch, []byte(good)); err != nil {
		t.Fatalf("the demo report does not validate: %v", err)
	}
	for _, tt := range []struct{ old, new string }{
		{`"schema_version": 1`, `"schema_version": 2`},
		{`"not_analysed": 0,`, ``},
		{`"rule": "item/missing-id"`, `"rule": "missing-id"`},
		{`"severity": "warning"`, `"severity": "fatal"`},
		{`"fixable": true`, `"fixable": "yes"`},
		{`"ordinal": null`, `"ordinal": "1"`},
		{`"notes": []`, `"notes": {}`},
		{`"line": 9`, `"line": -9`},
	} {
		bad := strings.Replace(good, tt.old, tt.new, 1)
		if bad == good {
			t.Fatalf("the demo report has no %s", tt.old)
		}
		if err := validateReport(sch, []byte(bad)); err == nil {
			t.Errorf("a report with %s instead of %s validates", tt.new, tt.old)
		}
	}
}

// TestSchemaKnowsEveryRuleID: the schema's rule pattern accepts every
// registered rule id.
func TestSchemaKnowsEveryRuleID(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(reportSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs struct {
			Rule struct {
				Pattern string `json:"pattern"`
			} `json:"rule"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(s.Defs.Rule.Pattern)
	for _, r := range checks.Rules() {
		if !re.MatchString(r.ID) {
			t.Errorf("rule %s does not match the schema's rule pattern %s", r.ID, re)
		}
	}
}

// cmdJSONSchema: jsonschema SCHEMA FILE fails unless FILE validates against
// the JSON Schema SCHEMA (! jsonschema: unless it does not).
func cmdJSONSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonschema schema file")
	}
	sch, err := jsonschema.NewCompiler().Compile(ts.MkAbs(args[0]))
	ts.Check(err)
	err = validateReport(sch, []byte(ts.ReadFile(args[1])))
	switch {
	case neg && err == nil:
		ts.Fatalf("%s validates against %s", args[1], args[0])
	case !neg && err != nil:
		ts.Fatalf("%s does not validate against %s: %v", args[1], args[0], err)
	}
}
