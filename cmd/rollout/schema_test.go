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
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
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

// jsonOutputs make real output of every JSON output in the schema table,
// in the shapes a run can give. A row of the table without a producer
// fails TestEveryJSONOutputValidates.
var jsonOutputs = map[schema.Name]func(t *testing.T, dir string) [][]byte{
	schema.VerifyReport: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "verify", "--format", "json", "--fail-on", "never", "../../fixtures")}
	},
	schema.Budget: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "simulate-budget", "--format", "json", "../../fixtures/budget/basic.jsonl"),
			runJSON(t, "simulate-budget", "--format", "json", "--window", "64k", "--window", "128k", "../../fixtures/budget/handoff-seed.jsonl")}
	},
	schema.BudgetFleet: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "simulate-budget", "--format", "json", "--compact-at", "auto", "--per-session", "../../fixtures/budget/fleet"),
			runJSON(t, "simulate-budget", "--format", "json", "--ledger", "100k", "../../fixtures/budget/fleet")}
	},
	schema.Repair: func(t *testing.T, dir string) [][]byte {
		in := filepath.Join(dir, "repair.jsonl")
		copyFile(t, demoRollout, in)
		rep := filepath.Join(dir, "repair.json")
		runQuiet(t, "repair", "--report", rep, in)
		dry, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		runQuiet(t, "repair", "--write", "--report", rep, in)
		wrote, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		return [][]byte{dry, wrote}
	},
	schema.Space: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "space", "--format", "json", "../../fixtures/demo", "../../fixtures/budget/fleet")}
	},
	schema.Reclaim: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "reclaim", "--format", "json", "--policy", "superseded-checkpoints,duplicate-exec-output,compress", "../../fixtures/demo", "../../fixtures/budget/fleet")}
	},
	schema.State: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "state", demoRollout), runJSON(t, "state", "--at-line", "5", demoRollout)}
	},
	schema.ResumeInput: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "state", "--items", demoRollout), runJSON(t, "state", "--items", "--codex-version", "0.58.0", "--at-line", "5", demoRollout)}
	},
	schema.HomeReport: func(t *testing.T, dir string) [][]byte {
		if err := homegen.Build(dir, homegen.Base); err != nil {
			t.Fatal(err)
		}
		return [][]byte{runJSON(t, "home", "--format", "json", "--fail-on", "never", dir)}
	},
	schema.Diff: func(t *testing.T, dir string) [][]byte {
		return [][]byte{runJSON(t, "diff", "--format", "json", "--at-line", "5", "--at-line", "30", demoRollout),
			runJSON(t, "diff", "--format", "json", demoRollout, demoRollout)}
	},
}

// runJSON runs rollout with args and returns its standard output, which
// must be JSON.
func runJSON(t *testing.T, args ...string) []byte {
	t.Helper()
	io, stdout, stderr := testIO("")
	if code := run(args, io); code == exitUsage || code == exitInternal {
		t.Fatalf("rollout %v: exit %d\n%s", args, code, stderr)
	}
	if stdout.Len() > 0 && !json.Valid(stdout.Bytes()) {
		t.Fatalf("rollout %v: not JSON:\n%s", args, stdout)
	}
	return stdout.Bytes()
}

// runQuiet runs rollout with args for what it writes to files.
func runQuiet(t *testing.T, args ...string) {
	t.Helper()
	io, _, stderr := testIO("")
	if code := run(args, io); code == exitUsage || code == exitInternal {
		t.Fatalf("rollout %v: exit %d\n%s", args, code, stderr)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o666); err != nil {
		t.Fatal(err)
	}
}

// TestEveryJSONOutputValidates: real output of every row of the schema
// table validates against the schema published for its version, which
// names that version.
func TestEveryJSONOutputValidates(t *testing.T) {
	t.Parallel()
	for _, o := range schema.Outputs() {
		t.Run(string(o.Name), func(t *testing.T) {
			t.Parallel()
			file := "../../" + schema.File(o.Name)
			sch, err := jsonschema.NewCompiler().Compile(file)
			if err != nil {
				t.Fatalf("compile %s: %v", file, err)
			}
			produce, ok := jsonOutputs[o.Name]
			if !ok {
				t.Fatalf("no producer of %s in jsonOutputs", o.Name)
			}
			for i, out := range produce(t, t.TempDir()) {
				if err := validateReport(sch, out); err != nil {
					t.Errorf("output %d does not follow %s: %v\n%s", i, file, err, out)
				}
				var head struct {
					Version int `json:"schema_version"`
				}
				if err := json.Unmarshal(out, &head); err != nil || head.Version != o.Version {
					t.Errorf("output %d: schema_version %d, the table says %d (%v)", i, head.Version, o.Version, err)
				}
			}
		})
	}
}

// TestSchemasRejectWrongShapes proves the published schemas can fail.
func TestSchemasRejectWrongShapes(t *testing.T) {
	t.Parallel()
	for name, bad := range map[schema.Name]string{
		schema.Budget:      `{"schema_version": 1, "command": "simulate-budget", "path": "x", "requests": "8"}`,
		schema.BudgetFleet: `{"schema_version": 1, "command": "simulate-budget", "kind": "single"}`,
		schema.Repair:      `{"schema_version": 1, "tool": "rollout", "version": "1", "command": "repair", "path": "x", "output": "x", "written": "no", "changes": [], "quarantined": [], "not_fixed": [], "remaining": {}}`,
		schema.Space:       `{"schema_version": 1, "command": "space"}`,
		schema.Reclaim: `{"schema": "reclaim-report", "schema_version": 2, "tool": "rollout", "version": "1", "command": "reclaim", "dry_run": true, "policies": [],
			"files": [{"path": "x", "bytes_before": 1, "bytes_after": 1, "freed": 0, "cuts": {}, "frees": {}, "skipped": {}, "written": false,
			"resume_state_identical": false, "state_diff": "-a\n+b", "new_findings": ["line 4: orphan output [tool/orphan-output]"]}]}`,
		schema.State: `{"schema_version": 2}`,
		schema.ResumeInput: `{"schema": "resume-input", "schema_version": 1, "tool": "rollout", "version": "1", "command": "state", "path": "x",
			"codex_version": "0.171.0", "writer_version": "0.171.0", "items": [{"role": "user"}]}`,
		schema.Diff: `{"schema_version": 1, "a": {}, "b": {}, "equal": true, "history_common_prefix": 0, "changes": [{"path": "x", "change": "moved"}]}`,
	} {
		file := "../../" + schema.File(name)
		sch, err := jsonschema.NewCompiler().Compile(file)
		if err != nil {
			t.Fatalf("compile %s: %v", file, err)
		}
		if err := validateReport(sch, []byte(bad)); err == nil {
			t.Errorf("%s accepts %s", file, bad)
		}
	}
}

// TestSchemasRejectOldShapes: real output put back in the shape a bumped
// schema replaced fails that schema.
func TestSchemasRejectOldShapes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     schema.Name
		args     []string
		old, new string // a regexp of the new shape and the old shape it replaced
	}{
		{schema.Budget, []string{"simulate-budget", "--format", "json", "../../fixtures/budget/basic.jsonl"},
			`"compact_at": \{\s*"kind": "percent",\s*"value": 90\s*\}`, `"compact_at": "90%"`},
		{schema.BudgetFleet, []string{"simulate-budget", "--format", "json", "--compact-at", "auto", "../../fixtures/budget/fleet"},
			`\{\s*"compact_at_permille": 500,\s*"post_compact_percent": null,\s*"reproduced": (\d+),\s*"exact": (\d+),\s*"simulated": (\d+)\s*\}`, `"500 -1 $1 $2 $3"`},
		{schema.BudgetFleet, []string{"simulate-budget", "--format", "json", "--compact-at", "auto", "../../fixtures/budget/fleet"},
			`"threshold": null,(\s*"post_compact_percent": null,\s*)"post_compact_tokens": null`, `"threshold": 0,${1}"post_compact_tokens": 0`},
	} {
		file := "../../" + schema.File(tt.name)
		sch, err := jsonschema.NewCompiler().Compile(file)
		if err != nil {
			t.Fatalf("compile %s: %v", file, err)
		}
		good := runJSON(t, tt.args...)
		re := regexp.MustCompile(tt.old)
		if !re.Match(good) {
			t.Fatalf("%s: no %s in\n%s", tt.name, tt.old, good)
		}
		bad := re.ReplaceAll(good, []byte(tt.new))
		if err := validateReport(sch, good); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if err := validateReport(sch, bad); err == nil {
			t.Errorf("%s accepts the old shape %s", file, tt.new)
		}
	}
}
