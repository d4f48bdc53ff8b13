package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/checks"
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
func summaryLine(s Summary) string {
	return fmt.Sprintf("%d files, %d records: %d errors, %d warnings, %d infos",
		s.Files, s.Records, s.Errors, s.Warnings, s.Infos)
}

// location is "path:line", or just "path" for a finding about the whole file
// (line 0).
func location(path string, line int) string {
	if line <= 0 {
		return path
	}
	return path + ":" + strconv.Itoa(line)
}

// printText writes one line per finding,
//
//	path:line: severity: message [rule]
//
// then the summary line. Control characters in the path and message are
// written as Go escapes (\n, \r, \x1b) so that each finding stays on one
// line and a log cannot send escape sequences to the terminal.
func printText(w io.Writer, r *Report, o Options) error {
	bw := bufio.NewWriter(w)
	for i := range r.Files {
		f := &r.Files[i]
		for j := range f.Findings {
			fd := &f.Findings[j]
			sev := severityName(fd.Severity)
			if o.Color {
				sev = colorize(fd.Severity, sev)
			}
			fmt.Fprintf(bw, "%s: %s: %s [%s]\n",
				location(oneLine(f.Path), fd.Line), sev, oneLine(fd.Message), oneLine(fd.Rule))
		}
	}
	bw.WriteString(summaryLine(r.Summary()) + "\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write text report: %w", err)
	}
	return nil
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

// oneLine escapes the C0 control characters (except tab), DEL and the C1
// control characters.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case isControl(c):
			q := strconv.QuoteRune(c) // e.g. '\x1b' or '\u0085'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func isControl(c rune) bool {
	return (c < 0x20 && c != '\t') || (c >= 0x7f && c <= 0x9f)
}

// printGitHub writes GitHub Actions workflow commands, one per finding:
//
//	::error file=PATH,line=N,title=RULE::message
//
// (::warning for warnings, ::notice for infos; line= is left out for a
// finding about the whole file). Nothing is written for a clean report.
func printGitHub(w io.Writer, r *Report, _ Options) error {
	bw := bufio.NewWriter(w)
	for i := range r.Files {
		f := &r.Files[i]
		for j := range f.Findings {
			fd := &f.Findings[j]
			bw.WriteString("::" + githubCommand(fd.Severity) + " file=" + githubProperty(f.Path))
			if fd.Line > 0 {
				bw.WriteString(",line=" + strconv.Itoa(fd.Line))
			}
			bw.WriteString(",title=" + githubProperty(fd.Rule) + "::" + githubData(fd.Message) + "\n")
		}
	}
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

func githubData(s string) string     { return githubDataEscaper.Replace(s) }
func githubProperty(s string) string { return githubPropertyEscaper.Replace(s) }

// printMarkdown writes the summary line, a blank line, and either a table
// with one row per finding or "No findings.". The table is GitHub Flavored
// Markdown, fit for a job summary or a PR comment.
func printMarkdown(w io.Writer, r *Report, _ Options) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(summaryLine(r.Summary()) + "\n\n")
	rows := 0
	for i := range r.Files {
		f := &r.Files[i]
		for j := range f.Findings {
			fd := &f.Findings[j]
			if rows == 0 {
				bw.WriteString("| file | line | severity | rule | message |\n|---|---|---|---|---|\n")
			}
			rows++
			line := ""
			if fd.Line > 0 {
				line = strconv.Itoa(fd.Line)
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n",
				markdownCell(f.Path), line, severityName(fd.Severity), markdownCell(fd.Rule), markdownCell(fd.Message))
		}
	}
	if rows == 0 {
		bw.WriteString("No findings.\n")
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

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
