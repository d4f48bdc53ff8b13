// Package report writes every document a command prints, in each of its
// formats (the table of formats.go), last in the data flow. verify
// hands each file's normalized FileResult, in path order, to a Stream per
// requested --format as soon as the file is done (verify), or a whole
// normalized Report to a Printer (merge). Both write only to the io.Writer
// they are given and never reorder what they are given, so the output is a
// pure function of the normalized report: no wall-clock time, no map
// iteration order.
package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// schemaVersion is the version of the JSON report (--format json and the
// objects of --format jsonl), from the schema table. The schema is
// additive: fields are added, never renamed or removed, without bumping it.
var schemaVersion = schema.Version(schema.VerifyReport)

// FileResult is what verify found in one file.
type FileResult struct {
	Path        string
	Records     int
	Era         string
	HistoryMode string
	CLIVersion  string
	ThreadID    string
	Findings    []checks.Finding
	// Error is set when the file could not be analysed, or not to its end:
	// every format shows it, so that an unreadable file never looks clean.
	Error *FileError
}

// FileError says why a file could not be analysed. Code is one of the
// stable Err* codes; Message is for people.
type FileError struct {
	Code    string
	Message string
}

// The codes of FileError, part of the JSON schema: never renamed.
const (
	ErrNotFound   = "not-found"         // vanished between the walk and the read
	ErrPermission = "permission-denied" // the file or directory cannot be opened
	ErrNotRegular = "not-regular-file"  // a FIFO, socket or device, not opened
	ErrNotRollout = "not-a-rollout"     // an archive or another format
	ErrReadFailed = "read-failed"       // failed part-way (I/O, corrupt zstd)
	ErrUnreadable = "unreadable"        // any other failure to open or list
	ErrInternal   = "internal-error"    // a bug, caught and reported
)

// Report is the whole result of one run.
type Report struct {
	Tool    string // "rollout"
	Version string // the tool's version
	Command string // "verify"
	Files   []FileResult
	// Notes are remarks about the run as a whole (an input directory that
	// holds no rollout), shown by the human formats and the JSON report.
	Notes []string
	// Suppressed counts the findings left out because --baseline lists
	// them; Hidden those left out because they are below the displayed
	// severity (--quiet, --show-severity). Neither is in Files.
	Suppressed, Hidden int
	// Settings are what decided which findings the run reports; merge
	// refuses shards whose settings differ. Nil in a report of a rollout
	// that did not record them.
	Settings *Settings
	// Shard is the part of the run the report covers (--shard K/N); nil
	// for a whole run.
	Shard *shard.Spec
}

// Settings are the options of a verify run that change what it reports
// (filters, baseline, limits, the clock), as the JSON report records them.
// What presents the findings (formats, --fail-on, colour) is not here: it
// is merge's to choose.
type Settings struct {
	Select         []string            `json:"select"`
	Ignore         []string            `json:"ignore"`
	PerPathIgnores map[string][]string `json:"per_path_ignores"`
	// ShowSeverity is the lowest severity listed (--show-severity, or
	// --fail-on with --quiet).
	ShowSeverity string `json:"show_severity"`
	// Baseline is "sha256:HEX" of the --baseline read, "written" with
	// --write-baseline, "" without.
	Baseline           string `json:"baseline"`
	MaxLineBytes       int64  `json:"max_line_bytes"`
	MaxFindingsPerRule int    `json:"max_findings_per_rule"`
	HandoffCap         int64  `json:"handoff_cap"`
	// Now is --now (RFC 3339), "" when liveness was judged by the clock.
	Now   string `json:"now"`
	Force bool   `json:"force"`
}

// Differ names the first setting in which s and o differ, with both
// values ("select [item/] and []"); "" when they are the same.
func (s *Settings) Differ(o *Settings) string {
	a, b := reflect.ValueOf(*s), reflect.ValueOf(*o)
	for i := range a.NumField() {
		va, _ := json.Marshal(a.Field(i).Interface())
		vb, _ := json.Marshal(b.Field(i).Interface())
		if !bytes.Equal(va, vb) {
			name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
			return fmt.Sprintf("%s %s and %s", name, va, vb)
		}
	}
	return ""
}

// Summary counts files, records and findings by severity.
type Summary struct {
	Files, Records, Errors, Warnings, Infos int
	// NotAnalysed counts the files with an Error.
	NotAnalysed int
	Suppressed  int
	Hidden      int
}

// Summary counts the report. A finding whose severity is none of error,
// warning or info is not counted.
func (r *Report) Summary() Summary {
	var t tally
	for i := range r.Files {
		t.add(&r.Files[i])
	}
	return t.summary(r)
}

// Normalize puts the report in the canonical order every printer expects:
// files sorted by path (files with the same path keep their relative order
// and are not merged), and in each file the findings sorted by (path, line,
// byte offset, rule, message) with exact duplicates dropped. A finding with
// an empty Path takes its file's path. Nil slices become empty slices.
// Normalize is idempotent.
func (r *Report) Normalize() {
	if r.Files == nil {
		r.Files = []FileResult{}
	}
	slices.SortStableFunc(r.Files, func(a, b FileResult) int { return strings.Compare(a.Path, b.Path) })
	for i := range r.Files {
		r.Files[i].Normalize()
	}
}

// Normalize puts one file's findings in the canonical order of
// Report.Normalize, without exact duplicates; a finding with an empty Path
// takes the file's. A Stream expects each file normalized.
func (f *FileResult) Normalize() {
	if f.Findings == nil {
		f.Findings = []checks.Finding{}
	}
	for j := range f.Findings {
		if f.Findings[j].Path == "" {
			f.Findings[j].Path = f.Path
		}
	}
	slices.SortStableFunc(f.Findings, compareFindings)
	out := f.Findings[:0]
	for j := range f.Findings {
		if j > 0 && compareFindings(out[len(out)-1], f.Findings[j]) == 0 {
			continue // exact duplicate
		}
		out = append(out, f.Findings[j])
	}
	clear(f.Findings[len(out):])
	f.Findings = out
}

// compareFindings orders by the documented key (path, line, byte offset,
// rule, message), then by every other field, so that it returns 0 only for
// exact duplicates. The evidence, in canonical form, is compared last and
// only then computed: findings rarely tie that far.
func compareFindings(a, b checks.Finding) int {
	if c := cmp.Or(
		strings.Compare(a.Path, b.Path),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.ByteOffset, b.ByteOffset),
		strings.Compare(a.Rule, b.Rule),
		strings.Compare(a.Message, b.Message),
		cmp.Compare(b.Severity, a.Severity), // most severe first
		compareOrdinal(a.Ordinal, b.Ordinal),
		compareBool(a.Fixable, b.Fixable),
	); c != 0 {
		return c
	}
	return strings.Compare(evidenceKey(a.EvidenceMap()), evidenceKey(b.EvidenceMap()))
}

func compareOrdinal(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// evidenceKey is a canonical string for an evidence map: nil and empty maps
// are equal (both print as {}), and encoding/json sorts keys at every level.
func evidenceKey(ev map[string]any) string {
	if len(ev) == 0 {
		return ""
	}
	b, err := json.Marshal(ev)
	if err != nil {
		// Not encodable (the JSON printers will report it); fmt also
		// prints maps with sorted keys.
		return fmt.Sprintf("%#v", ev)
	}
	return string(b)
}

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
type Printer func(w io.Writer, r *Report, o Options) error

type format struct {
	name   string
	stream func(io.Writer, Options) formatStream
}

// table is the one list of formats, in the order of --help.
func table() []format {
	return []format{
		{"text", newTextStream},
		{"json", newJSONStream},
		{"jsonl", newJSONLStream},
		{"sarif", sarifStream(checks.Lookup)},
		{"junit", newJUnitStream},
		{"codeclimate", newCodeClimateStream},
		{"github", newGitHubStream},
		{"markdown", newMarkdownStream},
		{"html", newHTMLStream},
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
	format, file, hasFile := strings.Cut(s, "=")
	if format == "" {
		return "", "", fmt.Errorf("parse --format %q: missing format name (want %s)", s, formatList())
	}
	if _, ok := lookup(format); !ok {
		return "", "", fmt.Errorf("parse --format %q: unknown format %q (want %s)", s, format, formatList())
	}
	if hasFile && file == "" {
		return "", "", fmt.Errorf("parse --format %q: missing file name after \"=\"", s)
	}
	return format, file, nil
}

// formatList is "text, json, ... or markdown".
func formatList() string {
	names := Formats()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// severityName is the name of a severity in every format.
func severityName(s checks.Severity) string { return s.String() }

// RuleCount is one row of --statistics: how many findings of a rule, at a
// severity, the report holds.
type RuleCount struct {
	Rule     string
	Severity checks.Severity
	Count    int
}

// Statistics counts the findings by rule and severity, most frequent first
// (ties by rule, then most severe first).
func (r *Report) Statistics() []RuleCount {
	var t tally
	for i := range r.Files {
		t.add(&r.Files[i])
	}
	return t.statistics()
}
