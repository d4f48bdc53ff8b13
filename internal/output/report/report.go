// Package report writes every document the commands print: verify's and
// merge's report in each --format (text, json, jsonl, sarif, junit,
// codeclimate, github, markdown, html) and its inverse (ReadJSON), and the
// documents of repair (plan, diff, outcome), reclaim, space, state and diff.
// It is the output stage of the flow, after the models of
// internal/derive (result, stateview, space) and the outcomes of
// internal/edit (repair, reclaim), and below cmd/rollout, which names a
// document and a format of the table in formats.go and hands it an
// io.Writer.
//
// verify streams each file's normalized result.FileResult, in path order,
// to its Outputs (outputs.go: a Stream per requested --format, the files
// opened through internal/edit/outfile, and GitHub's step summary) as soon
// as the file is done; merge hands a whole normalized result.Report to the
// same Outputs. Both never reorder
// what they are given and read no clock and no map order, so the report is
// a pure function of the normalized result.
package report

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// schemaVersion is the version of the JSON report (--format json and the
// objects of --format jsonl), from the schema table. The schema is
// additive: fields are added, never renamed or removed, without bumping it.
var schemaVersion = schema.Version(schema.VerifyReport)

// Options are the presentation choices that are not part of the report.
type Options struct {
	// Color adds ANSI colour to the severity word of the text format. The
	// command decides it (--color, NO_COLOR, terminal); other formats ignore
	// it.
	Color bool
	// FailOn is the lowest severity that fails the run (--fail-on);
	// NeverFail when nothing does. JUnit makes only these findings
	// failures. The zero value is Info: the command always sets it.
	FailOn checks.Severity
	// Statistics adds counts by rule and severity (text and JSON).
	Statistics bool
	// Links are the html format's links to the rollouts and their views.
	Links Links
	// SourceRoot is the absolute directory that SARIF's %SRCROOT% and the
	// Code Quality paths are relative to (the repository's root, for code
	// scanning to map results to files); "" names files as the report
	// holds them.
	SourceRoot string
}

// fromRoot is a file's slash-separated path relative to SourceRoot, and
// whether it is under it; otherwise the path as the report holds it.
func (o Options) fromRoot(path string) (string, bool) {
	if o.SourceRoot == "" || path == "-" {
		return filepath.ToSlash(path), false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(path), false
	}
	rel, err := filepath.Rel(o.SourceRoot, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs), false
	}
	return filepath.ToSlash(rel), true
}

// NeverFail is the FailOn of --fail-on never: above every severity.
const NeverFail = checks.Error + 1

// Printer writes a report in one format. It expects a normalized report
// (see Report.Normalize) and does not modify it. Each printer is a Stream
// fed r.Files in order.
type Printer func(w io.Writer, r *result.Report, o Options) error

type format struct {
	name   string
	stream func(io.Writer, Options) formatStream
	// What the format takes of Options, and whether it asks for the step
	// summary: see Format in formats.go.
	color, links, summary bool
}

// table is the one list of formats, in the order of --help.
func table() []format {
	return []format{
		{name: "text", stream: newTextStream, color: true},
		{name: "json", stream: newJSONStream},
		{name: "jsonl", stream: newJSONLStream},
		{name: "sarif", stream: sarifStream(checks.Lookup)},
		{name: "junit", stream: newJUnitStream},
		{name: "codeclimate", stream: newCodeClimateStream},
		{name: "github", stream: newGitHubStream, summary: true},
		{name: "markdown", stream: newMarkdownStream},
		{name: "html", stream: newHTMLStream, links: true},
	}
}

// Formats lists the format names accepted by --format, in the order of
// --help. The caller owns the returned slice.
func Formats() []string {
	t := table()
	names := make([]string, len(t))
	for i, f := range t {
		names[i] = f.name
	}
	return names
}

// lookup returns the printer of a format. Names are exact and lower case.
func lookup(format string) (Printer, bool) {
	for _, f := range table() {
		if f.name == format {
			return streamPrinter(f.stream), true
		}
	}
	return nil, false
}

// ParseFormatSpec parses a --format value, "FORMAT" or "FORMAT=FILE", into
// the format name and the file ("" when the report goes to standard output).
// The value is split at the first "=", so FILE may itself contain "=". The
// file is returned verbatim: deciding what "-" means, and creating the file,
// are the caller's business. It fails on an unknown format or an empty FILE
// after "=".
func ParseFormatSpec(s string) (format, file string, err error) {
	return parseFormatSpec(s, Formats(), " (want "+formatList(Formats())+")")
}

// parseFormatSpec is ParseFormatSpec over the format names a document
// has (verify's are the Streams and parquet); want follows the message
// of a missing or unknown format (a hint may list them instead).
func parseFormatSpec(s string, names []string, want string) (format, file string, err error) {
	format, file, hasFile := strings.Cut(s, "=")
	if format == "" {
		return "", "", fmt.Errorf("parse --format %q: missing format name%s", s, want)
	}
	if !slices.Contains(names, format) {
		return "", "", fmt.Errorf("parse --format %q: unknown format %q%s", s, format, want)
	}
	if hasFile && file == "" {
		return "", "", fmt.Errorf("parse --format %q: missing file name after \"=\"", s)
	}
	return format, file, nil
}

// formatList is "text, json, ... or markdown".
func formatList(names []string) string {
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// severityName is the name of a severity in every format.
func severityName(s checks.Severity) string { return s.String() }
