package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/internal/output/termsafe"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// ANSI colours of the severity word in the text format.
const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiReset  = "\x1b[0m"
)

// summaryLine is the last line of the text format and the first of the
// markdown format. The words are always plural ("1 files", "1 errors"): the
// line is read by scripts as much as by people, and a fixed shape is easier
// to match than correct English.
// The counts of files not analysed, findings suppressed by a baseline and
// findings hidden below the displayed severity follow only when non-zero,
// so that a plain run keeps the fixed shape.
func summaryLine(s result.Summary) string {
	checked := fmt.Sprintf("%d files, %d records", s.Files, s.Records)
	if s.Checked != "" {
		checked = s.Checked
	}
	line := fmt.Sprintf("%s: %d errors, %d warnings, %d infos", checked, s.Errors, s.Warnings, s.Infos)
	if s.NotAnalysed > 0 {
		line += fmt.Sprintf("; %d files not analysed", s.NotAnalysed)
	}
	if s.Suppressed > 0 {
		line += fmt.Sprintf("; %d suppressed by the baseline", s.Suppressed)
	}
	if s.Hidden > 0 {
		line += fmt.Sprintf("; %d below the shown severity", s.Hidden)
	}
	return line
}

// notAnalysed is the one-line text of a file error, the same in every
// format that has no field for it: "not analysed: MESSAGE".
func notAnalysed(e *result.FileError) string { return "not analysed: " + e.Message }

// location is "path:line", or just "path" for a finding about the whole file
// (line 0).
func location(path string, line int) string {
	if line <= 0 {
		return path
	}
	return path + ":" + strconv.Itoa(line)
}

// textStream writes one line per finding,
//
//	path:line: severity: message [rule]
//
// and per file not analysed ("path: error: not analysed: reason [code]"),
// then the notes ("note: ..."), the statistics when asked, and the summary
// line. Control characters in the path and message are written as Go
// escapes (\n, \r, \x1b) so that each finding stays on one line and a log
// cannot send escape sequences to the terminal.
//
// Each file's lines are written (flushed) as soon as the file comes.
type textStream struct {
	noSpool
	bw *bufio.Writer
	o  Options
}

func newTextStream(w io.Writer, o Options) formatStream {
	return &textStream{bw: bufio.NewWriter(w), o: o}
}

func (s *textStream) file(f *result.FileResult, _ *result.Tally) error {
	bw, o := s.bw, s.o
	if f.Error != nil {
		sev := severityName(checks.Error)
		if o.Color {
			sev = colorize(checks.Error, sev)
		}
		fmt.Fprintf(bw, "%s: %s: %s [%s]\n", oneLine(f.Path), sev, oneLine(notAnalysed(f.Error)), f.Error.Code)
	}
	for j := range f.Findings {
		fd := &f.Findings[j]
		sev := severityName(fd.Severity)
		if o.Color {
			sev = colorize(fd.Severity, sev)
		}
		fmt.Fprintf(bw, "%s: %s: %s [%s]\n",
			location(oneLine(f.Path), fd.Line), sev, oneLine(fd.Message), oneLine(fd.Rule))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write text report: %w", err)
	}
	return nil
}

func (s *textStream) finish(r *result.Report, t *result.Tally) error {
	bw := s.bw
	for _, n := range r.Notes {
		bw.WriteString("note: " + oneLine(n) + "\n")
	}
	if s.o.Statistics {
		writeStatistics(bw, t.Statistics())
	}
	bw.WriteString(summaryLine(t.Summary(r)) + "\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write text report: %w", err)
	}
	return nil
}

// writeStatistics writes the --statistics table: count, severity, rule.
func writeStatistics(w io.Writer, stats []result.RuleCount) {
	if len(stats) == 0 {
		return
	}
	width := len(strconv.Itoa(stats[0].Count)) // most frequent first
	for _, rc := range stats {
		fmt.Fprintf(w, "%*d  %-7s  %s\n", width, rc.Count, severityName(rc.Severity), oneLine(rc.Rule))
	}
}

func colorize(s checks.Severity, word string) string {
	switch s {
	case checks.Error:
		return ansiRed + word + ansiReset
	case checks.Warning:
		return ansiYellow + word + ansiReset
	case checks.Info:
		return ansiBlue + word + ansiReset
	}
	return word
}

// oneLine makes text from a rollout safe for a terminal and one line:
// control characters as \x1b, \n, C1 and bidi controls as \u009b
// (internal/output/termsafe, shared by every text printer).
func oneLine(s string) string { return termsafe.String(s) }

// githubStream writes GitHub Actions workflow commands, one per finding:
//
//	::error file=PATH,line=N,title=RULE::message
//
// (::warning for warnings, ::notice for infos; line= is left out for a
// finding about the whole file), an ::error per file not analysed (title
// "not analysed: CODE"), a ::notice per note, and last one ::notice with the
// summary line: GitHub shows only about ten annotations of each level per
// step, so the summary is what tells how many there are.
type githubStream struct {
	noSpool
	bw *bufio.Writer
}

func newGitHubStream(w io.Writer, _ Options) formatStream {
	return &githubStream{bw: bufio.NewWriter(w)}
}

func (s *githubStream) file(f *result.FileResult, _ *result.Tally) error {
	bw := s.bw
	if f.Error != nil {
		bw.WriteString("::error file=" + githubProperty(f.Path) + ",title=" +
			githubProperty("not analysed: "+f.Error.Code) + "::" + githubData(notAnalysed(f.Error)) + "\n")
	}
	for j := range f.Findings {
		fd := &f.Findings[j]
		bw.WriteString("::" + githubCommand(fd.Severity) + " file=" + githubProperty(f.Path))
		if fd.Line > 0 {
			bw.WriteString(",line=" + strconv.Itoa(fd.Line))
		}
		bw.WriteString(",title=" + githubProperty(fd.Rule) + "::" + githubData(fd.Message) + "\n")
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write github report: %w", err)
	}
	return nil
}

func (s *githubStream) finish(r *result.Report, t *result.Tally) error {
	bw := s.bw
	for _, n := range r.Notes {
		bw.WriteString("::notice title=rollout::" + githubData(n) + "\n")
	}
	bw.WriteString("::notice title=" + githubProperty(r.Tool+" "+r.Command) + "::" + githubData(summaryLine(t.Summary(r))) + "\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write github report: %w", err)
	}
	return nil
}

func githubCommand(s checks.Severity) string {
	switch s {
	case checks.Error:
		return "error"
	case checks.Warning:
		return "warning"
	}
	return "notice"
}

// githubData escapes a command's message as @actions/core does
// (escapeData): % first, then CR and LF.
var githubDataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// githubPropertyEscaper escapes a command's property value as @actions/core
// does (escapeProperty): the data escapes plus ":" and ",".
var githubPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// The workflow commands are also printed to the job's log, a terminal:
// the other control characters are escaped first (CR and LF are kept for
// the GitHub escapes, which encode them).
func githubData(s string) string     { return githubDataEscaper.Replace(safeKeepingBreaks(s)) }
func githubProperty(s string) string { return githubPropertyEscaper.Replace(safeKeepingBreaks(s)) }

func safeKeepingBreaks(s string) string {
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			b.WriteString(termsafe.String(s[start:i]))
			b.WriteByte(s[i])
			start = i + 1
		}
	}
	b.WriteString(termsafe.String(s[start:]))
	return b.String()
}

// markdownStream writes the summary line, a blank line, the notes as a
// list, and either a table with one row per finding or "No findings.". A
// file not analysed is a row with severity error and, for rule, "not
// analysed: CODE". The table is GitHub Flavored Markdown, fit for a job
// summary or a PR comment.
//
// The summary comes first: the rows are spooled until Close.
type markdownStream struct {
	w    io.Writer
	rows spool
}

func newMarkdownStream(w io.Writer, _ Options) formatStream { return &markdownStream{w: w} }

func (s *markdownStream) file(f *result.FileResult, _ *result.Tally) error {
	bw := &s.rows // errors are kept for copyTo
	if f.Error != nil {
		fmt.Fprintf(bw, "| %s |  | error | %s | %s |\n",
			markdownCell(f.Path), markdownCell("not analysed: "+f.Error.Code), markdownCell(f.Error.Message))
	}
	for j := range f.Findings {
		fd := &f.Findings[j]
		line := ""
		if fd.Line > 0 {
			line = strconv.Itoa(fd.Line)
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n",
			markdownCell(f.Path), line, severityName(fd.Severity), markdownCell(fd.Rule), markdownCell(fd.Message))
	}
	return nil
}

func (s *markdownStream) finish(r *result.Report, t *result.Tally) error {
	bw := bufio.NewWriter(s.w)
	bw.WriteString(summaryLine(t.Summary(r)) + "\n\n")
	for _, n := range r.Notes {
		bw.WriteString("- note: " + markdownCell(n) + "\n")
	}
	if len(r.Notes) > 0 {
		bw.WriteString("\n")
	}
	if s.rows.empty() {
		bw.WriteString("No findings.\n")
	} else {
		bw.WriteString("| file | line | severity | rule | message |\n|---|---|---|---|---|\n")
		if err := s.rows.copyTo(bw); err != nil {
			return fmt.Errorf("write markdown report: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

func (s *markdownStream) release() { s.rows.release() }

// markdownCellEscaper keeps a value inside one table cell and shows it as
// written: "|" and "\" are backslash-escaped, HTML is neutralised (GitHub
// would otherwise swallow "<tag>"), and line breaks become <br>.
var markdownCellEscaper = strings.NewReplacer(
	`\`, `\\`,
	"|", `\|`,
	"&", "&amp;",
	"<", "&lt;",
	">", "&gt;",
	"\r\n", "<br>",
	"\n", "<br>",
	"\r", "<br>",
)

// markdownCell escapes a cell; other control characters are escaped as in
// the text format.
func markdownCell(s string) string { return oneLine(markdownCellEscaper.Replace(s)) }
