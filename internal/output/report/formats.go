package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/rollout-dev/rollout/internal/base/suggest"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/output/chart"
)

// The one table of outputs: for each command's document, the formats it
// is written in, in the order of --help, each with its writer. A command
// names its document; the format names it accepts, its --format help and
// its "invalid --format" errors all come from here, and Write picks the
// writer. A new format is one row.

// Document names what a command writes.
type Document string

// The documents, and the value Write takes for each.
const (
	DocVerify  Document = "verify"  // VerifyDoc: verify, and merge of verify reports
	DocHome    Document = "home"    // VerifyDoc: home's findings, in verify's formats
	DocState   Document = "state"   // StateDoc
	DocInput   Document = "input"   // InputDoc: state --items
	DocDiff    Document = "diff"    // *Diff
	DocSpace   Document = "space"   // SpaceDoc
	DocReclaim Document = "reclaim" // ReclaimDoc
	DocRepair  Document = "repair"  // *repair.Outcome: repair --report
	DocBudget  Document = "budget"  // *budget.Result: simulate-budget of one rollout
	DocFleet   Document = "fleet"   // *budget.Fleet: simulate-budget of many, merge of fleet reports
)

// VerifyDoc is a whole verify report with its presentation.
type VerifyDoc struct {
	Report  *result.Report
	Options Options
}

// StateDoc is the state of the file at Path.
type StateDoc struct {
	Path string
	View stateview.View
}

// SpaceDoc is space's accounting: the summary, the files it could not
// read, the Codex homes it measured and the rows per table.
type SpaceDoc struct {
	Summary *space.Summary
	Failed  []SpaceFailure
	Homes   []home.Usage
	Top     int
}

// ReclaimDoc is what reclaim planned (or, with Write, did) per file.
type ReclaimDoc struct {
	Outcomes []*reclaim.Outcome
	Policies []string
	Write    bool
}

// Format is one format of a document.
type Format struct {
	Name string
	// Binary says what the format writes when it is not text ("a PNG
	// image"): a command refuses to write it to a terminal.
	Binary string
	// Trace: the format draws every request (the charts), so the result
	// must be simulated with budget.Settings.Trace.
	Trace bool
	// Color: the format draws colour (Options.Color) where the command
	// allows it; Links: it links to the rollouts and their pages
	// (Options.Links); StepSummary: in GitHub Actions the run also writes
	// a summary of the report to the job (OutputOptions.StepSummary).
	Color, Links, StepSummary bool
	// Dir: the format writes tables into a directory (FORMAT=DIR, never
	// standard output), through WriteDir; verify's outputs stream it.
	Dir      bool
	write    func(w io.Writer, doc any) error
	writeDir func(dir string, doc any) error
}

// parquetFormat is the Parquet tables of a document (parquet.go).
func parquetFormat[T any](write func(string, T) error) Format {
	return Format{Name: "parquet", Dir: true, writeDir: func(dir string, doc any) error { return write(dir, doc.(T)) }}
}

// documentFormats is one row of the table.
type documentFormats struct {
	doc     Document
	formats []Format
	// aliases are older names kept working ("table" was the budget
	// tables' name before every command called it "text").
	aliases map[string]string
	// verifyErrors: --format errors are ParseFormatSpec's, as verify has
	// always said them; other documents say "invalid --format".
	verifyErrors bool
}

// writer adapts a typed writer to the table's.
func writer[T any](write func(io.Writer, T) error) func(io.Writer, any) error {
	return func(w io.Writer, doc any) error { return write(w, doc.(T)) }
}

// formatTable is the table. verify's formats are its Streams (table in
// report.go), each written whole through its Printer.
func formatTable() []documentFormats {
	budgetAliases := map[string]string{"table": "text"}
	return []documentFormats{
		{doc: DocVerify, formats: append(verifyFormats(), parquetFormat(writeVerifyParquet)), verifyErrors: true},
		{doc: DocHome, formats: verifyFormats(), verifyErrors: true},
		{doc: DocState, formats: []Format{{Name: "json", write: writer(writeState)}}},
		{doc: DocInput, formats: []Format{{Name: "json", write: writer(WriteInputJSON)}}},
		{doc: DocDiff, formats: []Format{
			{Name: "text", write: writer(WriteDiffText)},
			{Name: "json", write: writer(WriteDiffJSON)}}},
		{doc: DocSpace, formats: []Format{
			{Name: "text", write: writer(func(w io.Writer, d SpaceDoc) error { return WriteSpaceText(w, d.Summary, d.Homes, d.Top) })},
			{Name: "json", write: writer(func(w io.Writer, d SpaceDoc) error { return WriteSpaceJSON(w, d.Summary, d.Failed, d.Homes) })},
			{Name: "csv", write: writer(func(w io.Writer, d SpaceDoc) error { return WriteSpaceCSV(w, d.Summary) })}}},
		{doc: DocReclaim, formats: []Format{
			{Name: "text", write: writer(func(w io.Writer, d ReclaimDoc) error { return WriteReclaimText(w, d.Outcomes, d.Write) })},
			{Name: "json", write: writer(func(w io.Writer, d ReclaimDoc) error {
				return WriteReclaimJSON(w, d.Outcomes, d.Policies, d.Write)
			})}}},
		{doc: DocRepair, formats: []Format{{Name: "json", write: writer(WriteRepairJSON)}}},
		{doc: DocBudget, aliases: budgetAliases, formats: []Format{
			{Name: "text", write: writer(WriteBudgetText)},
			{Name: "json", write: writer(WriteBudgetJSON)},
			{Name: "csv", write: writer(WriteBudgetCSV)},
			{Name: "svg", Trace: true, write: writer(func(w io.Writer, r *budget.Result) error { return chart.Write(w, r, "svg") })},
			{Name: "png", Trace: true, Binary: "a PNG image", write: writer(func(w io.Writer, r *budget.Result) error { return chart.Write(w, r, "png") })}}},
		{doc: DocFleet, aliases: budgetAliases, formats: []Format{
			{Name: "text", write: writer(WriteFleetText)},
			{Name: "json", write: writer(WriteFleetJSON)},
			{Name: "csv", write: writer(WriteFleetCSV)},
			{Name: "svg", write: writer(func(w io.Writer, f *budget.Fleet) error { return chart.WriteFleet(w, f, "svg") })},
			{Name: "png", Binary: "a PNG image", write: writer(func(w io.Writer, f *budget.Fleet) error { return chart.WriteFleet(w, f, "png") })},
			parquetFormat(writeFleetParquet)}},
	}
}

// verifyFormats are verify's formats, each a Stream fed the whole report.
func verifyFormats() []Format {
	var fs []Format
	for _, f := range table() {
		print := streamPrinter(f.stream)
		fs = append(fs, Format{Name: f.name, Color: f.color, Links: f.links, StepSummary: f.summary, write: writer(func(w io.Writer, d VerifyDoc) error {
			return print(w, d.Report, d.Options)
		})})
	}
	return fs
}

// writeState writes the JSON of `rollout state`.
func writeState(w io.Writer, d StateDoc) error { return WriteStateJSON(w, d.Path, d.View) }

// formats is the table, built once: --help and completion read it for
// every command.
var formats = sync.OnceValue(formatTable)

// row is the table's row of doc; it panics for a document not in the
// table, a bug.
func row(doc Document) documentFormats {
	for _, r := range formats() {
		if r.doc == doc {
			return r
		}
	}
	panic(fmt.Sprintf("report: no document %q", doc))
}

// FormatsOf lists the format names of doc, in the order of --help; the
// first is the default.
func FormatsOf(doc Document) []string {
	fs := row(doc).formats
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return names
}

// DefaultFormat is the format of doc written when none is named.
func DefaultFormat(doc Document) string { return row(doc).formats[0].Name }

// FormatHelp is the formats of doc for a flag's help: "text|json".
func FormatHelp(doc Document) string { return strings.Join(FormatsOf(doc), "|") }

// LookupFormat is the format of doc named name (or an alias of it).
func LookupFormat(doc Document, name string) (Format, bool) {
	r := row(doc)
	if alias, ok := r.aliases[name]; ok {
		name = alias
	}
	for _, f := range r.formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// A FormatError is a --format value a document has no format for; Hint
// names the formats it has.
type FormatError struct{ msg, hint string }

func (e *FormatError) Error() string { return e.msg }

// Hint says what to use instead.
func (e *FormatError) Hint() string { return e.hint }

// ParseFormat parses a --format value of doc, "FORMAT" or "FORMAT=FILE"
// (split at the first "="), into the format's name (an alias resolved)
// and the file, returned verbatim ("" when none is named).
func ParseFormat(doc Document, spec string) (name, file string, err error) {
	r := row(doc)
	names := FormatsOf(doc)
	typed, _, _ := strings.Cut(spec, "=")
	if r.verifyErrors {
		name, file, err := parseFormatSpec(spec, names, "")
		if err != nil {
			return "", "", &FormatError{err.Error(), nearestFormat(typed, names, "formats: "+strings.Join(names, ", "))}
		}
		return name, file, nil
	}
	name, file, _ = strings.Cut(spec, "=")
	f, ok := LookupFormat(doc, name)
	if !ok {
		return "", "", &FormatError{fmt.Sprintf("invalid --format %q", spec), nearestFormat(typed, names, "use --format "+FormatHelp(doc))}
	}
	return f.Name, file, nil
}

// nearestFormat is the hint of a format that is not one: the nearest
// formats, then the list.
func nearestFormat(typed string, names []string, list string) string {
	if slices.Contains(names, typed) {
		return list
	}
	return suggest.Hint(typed, names, 1, func(n string) string { return "--format " + n }, list)
}

// Write writes doc's value v in the named format.
func Write(w io.Writer, doc Document, format string, v any) error {
	f, ok := LookupFormat(doc, format)
	if !ok {
		return fmt.Errorf("%s has no format %q (want %s)", doc, format, FormatHelp(doc))
	}
	if f.Dir {
		return fmt.Errorf("%s writes a directory, not a stream", format)
	}
	return f.write(w, v)
}

// WriteDir writes doc's value v in the named directory format into dir,
// which is made as needed.
func WriteDir(doc Document, format, dir string, v any) error {
	f, ok := LookupFormat(doc, format)
	if !ok || !f.Dir {
		return fmt.Errorf("%s has no directory format %q", doc, format)
	}
	return f.writeDir(dir, v)
}

// WriteViewChart writes the chart `rollout view` puts in a rollout's page:
// the budget document's SVG.
func WriteViewChart(w io.Writer, r *budget.Result) error { return Write(w, DocBudget, "svg", r) }
