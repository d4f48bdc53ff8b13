// Package schema is the one table of rollout's JSON outputs: each output's
// name, schema version and the command that writes it, the common header
// every output starts with, and where its JSON Schema is published
// (docs/schema/NAME.vVERSION.json). `rollout version` prints the table
// whole; a test in cmd/rollout validates real output of every row against
// its published schema. It belongs to the output stage (internal/output)
// and imports nothing of the module.
//
// A new JSON output is one row in outputs below, one schema file under
// docs/schema/, and one producer in cmd/rollout's schema test (the test
// fails for a row without one). A shape that changes incompatibly bumps its
// row's Version (and gets a new schema file); additive fields do not.
package schema

import (
	"fmt"

	"github.com/rollout-dev/rollout/internal/base/buildinfo"
)

// Name names one JSON output; it is the header's "schema" field.
type Name string

// The JSON outputs.
const (
	VerifyReport Name = "verify-report"         // verify --format json (merge of verify reports)
	Budget       Name = "simulate-budget"       // simulate-budget of one rollout
	BudgetFleet  Name = "simulate-budget-fleet" // simulate-budget of many (merge of fleet reports)
	Repair       Name = "repair-report"         // repair --format json
	Space        Name = "space-report"          // space --format json
	Reclaim      Name = "reclaim-report"        // reclaim --format json
	State        Name = "state"                 // state --format json
	Diff         Name = "diff"                  // diff --format json
	ResumeInput  Name = "resume-input"          // state --items
	HomeReport   Name = "home-report"           // home --format json: verify's report of a Codex home's checks
)

// Output is one row of the table.
type Output struct {
	Name    Name
	Version int
	Command string // the command that writes it
	// Changes says what each version after 1 changed, for the docs.
	Changes string
}

// outputs is the table, in the order `rollout version` prints it.
var outputs = []Output{
	{Name: VerifyReport, Version: 1, Command: "verify"},
	{Name: Budget, Version: 2, Command: "simulate-budget",
		Changes: "2: compact_at is an object {kind: percent|tokens|auto, value} instead of a string; calibration.threshold is null without a recorded window; the common header"},
	{Name: BudgetFleet, Version: 2, Command: "simulate-budget",
		Changes: "2: fit_grid rows are objects with named numbers instead of strings of five integers; compact_at is an object {kind, value}; each setting has threshold (null at the recorded windows for a percentage); fitted.threshold and fitted.post_compact_tokens are null instead of 0; the common header"},
	{Name: Repair, Version: 1, Command: "repair"},
	{Name: Space, Version: 1, Command: "space"},
	{Name: Reclaim, Version: 2, Command: "reclaim",
		Changes: "2: state_diff is a list of changes (path, change, a, b, lines) instead of go-cmp text; new_findings are verify's finding objects instead of strings; both always present; the common header"},
	{Name: State, Version: 1, Command: "state"},
	{Name: Diff, Version: 1, Command: "diff"},
	{Name: ResumeInput, Version: 1, Command: "state"},
	{Name: HomeReport, Version: 1, Command: "home"},
}

// The Parquet tables (--format parquet=DIR), versioned like the JSON
// outputs: a column is added without a bump, never renamed or retyped.
// Each is published as docs/schema/NAME.parquet.vVERSION.md, its columns
// in a table that a test holds the written files to.
const (
	VerifyFindings Name = "verify-findings"      // DIR/findings: one row per finding
	VerifyFiles    Name = "verify-files"         // DIR/files: one row per file verified
	BudgetRows     Name = "simulate-budget-rows" // DIR/budget: one row per thread and setting
)

// parquetTables is the table of Parquet tables, in the order `rollout
// version` prints it; Changes as in outputs.
var parquetTables = []Output{
	{Name: VerifyFindings, Version: 1, Command: "verify"},
	{Name: VerifyFiles, Version: 1, Command: "verify"},
	{Name: BudgetRows, Version: 1, Command: "simulate-budget"},
}

// ParquetTables is a copy of the table of Parquet tables.
func ParquetTables() []Output { return append([]Output(nil), parquetTables...) }

// ParquetFile is the path of the published column description of a
// Parquet table, relative to the repository root.
func ParquetFile(name Name) string {
	for _, o := range parquetTables {
		if o.Name == name {
			return fmt.Sprintf("docs/schema/%s.parquet.v%d.md", o.Name, o.Version)
		}
	}
	panic(fmt.Sprintf("schema: %q is not a Parquet table", name))
}

// Outputs is a copy of the table.
func Outputs() []Output { return append([]Output(nil), outputs...) }

// lookup is the row of name; it panics for a name not in the table, a bug.
func lookup(name Name) Output {
	for _, o := range outputs {
		if o.Name == name {
			return o
		}
	}
	panic(fmt.Sprintf("schema: %q is not in the table", name))
}

// Version is the schema version of name, a JSON output or a Parquet
// table.
func Version(name Name) int {
	for _, o := range parquetTables {
		if o.Name == name {
			return o.Version
		}
	}
	return lookup(name).Version
}

// File is the path of name's published JSON Schema, relative to the
// repository root.
func File(name Name) string {
	o := lookup(name)
	return fmt.Sprintf("docs/schema/%s.v%d.json", o.Name, o.Version)
}

// Header opens every JSON output: which schema and version it follows and
// what wrote it. Embedded (untagged) in an output's struct, its fields
// come first in the object.
type Header struct {
	Schema        Name   `json:"schema"`
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Version       string `json:"version"`
	Command       string `json:"command"`
}

// NewHeader is the header of name, written by this build.
func NewHeader(name Name) Header {
	o := lookup(name)
	return Header{Schema: o.Name, SchemaVersion: o.Version, Tool: "rollout", Version: ToolVersion(), Command: o.Command}
}

// ToolVersion is the module version: the tag `go install` built, or 0.1.0
// for a build from a checkout.
func ToolVersion() string { return buildinfo.Version() }
