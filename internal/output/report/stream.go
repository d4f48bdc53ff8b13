package report

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/checks"
)

// A Stream writes one format while a run's files arrive, so that memory
// follows the largest file rather than the run. Files must come in report
// order (sorted by path) and each normalized (FileResult.Normalize): the
// output is then byte for byte what the format's Printer writes for the
// whole report.
//
// The line formats (text, jsonl, github, codeclimate) write each file as it
// comes. The formats that put totals before the files (json, sarif, junit,
// markdown, html) keep the files' part in a spool, in memory up to
// spoolMemory and then in a temporary file, and write it out on Close.
type Stream struct {
	run *Report // Tool, Version, Command, Notes; Suppressed and Hidden read on Close
	t   tally
	fs  formatStream
	err error
}

// formatStream is one format's half of a Stream.
type formatStream interface {
	// file writes or spools one file; t already counts it.
	file(f *FileResult, t *tally) error
	// finish writes what is left, with the run's totals.
	finish(run *Report, t *tally) error
	// release frees the spool, written out or not.
	release()
}

// NewStream starts writing format to w. run holds what is known of the run
// as a whole (its Files are ignored); its Suppressed and Hidden counts are
// read on Close, so they may grow while files arrive.
func NewStream(format string, w io.Writer, run *Report, o Options) (*Stream, error) {
	for _, f := range table() {
		if f.name == format {
			return &Stream{run: run, fs: f.stream(w, o)}, nil
		}
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", format, formatList())
}

// File writes one file's result. After an error the Stream ignores further
// files and Close only releases it.
func (s *Stream) File(f *FileResult) error {
	if s.err != nil {
		return s.err
	}
	s.t.add(f)
	s.err = s.fs.file(f, &s.t)
	return s.err
}

// Close writes the rest of the report and releases the spool. It returns
// the first error of the Stream.
func (s *Stream) Close() error {
	defer s.fs.release()
	if s.err != nil {
		return s.err
	}
	s.err = s.fs.finish(s.run, &s.t)
	return s.err
}

// Discard releases the Stream without writing the rest.
func (s *Stream) Discard() { s.fs.release() }

// streamPrinter is the Printer of a format: a Stream fed the whole report.
func streamPrinter(newStream func(io.Writer, Options) formatStream) Printer {
	return func(w io.Writer, r *Report, o Options) error {
		s := &Stream{run: r, fs: newStream(w, o)}
		for i := range r.Files {
			if err := s.File(&r.Files[i]); err != nil {
				s.Discard()
				return err
			}
		}
		return s.Close()
	}
}

// tally counts what the printers show before or after the files.
type tally struct {
	files, records, notAnalysed int
	errors, warnings, infos     int
	rules                       map[ruleSeverity]int
	// first and highest severity seen per rule (html, sarif).
	firstSeverity, maxSeverity map[string]checks.Severity
}

type ruleSeverity struct {
	rule string
	sev  checks.Severity
}

func (t *tally) add(f *FileResult) {
	if t.rules == nil {
		t.rules = map[ruleSeverity]int{}
		t.firstSeverity = map[string]checks.Severity{}
		t.maxSeverity = map[string]checks.Severity{}
	}
	t.files++
	t.records += f.Records
	if f.Error != nil {
		t.notAnalysed++
	}
	for j := range f.Findings {
		fd := &f.Findings[j]
		switch fd.Severity {
		case checks.Error:
			t.errors++
		case checks.Warning:
			t.warnings++
		case checks.Info:
			t.infos++
		}
		t.rules[ruleSeverity{fd.Rule, fd.Severity}]++
		if s, ok := t.maxSeverity[fd.Rule]; !ok || fd.Severity > s {
			t.maxSeverity[fd.Rule] = fd.Severity
		}
		if _, ok := t.firstSeverity[fd.Rule]; !ok {
			t.firstSeverity[fd.Rule] = fd.Severity
		}
	}
}

func (t *tally) summary(run *Report) Summary {
	return Summary{Files: t.files, Records: t.records, Errors: t.errors, Warnings: t.warnings, Infos: t.infos,
		NotAnalysed: t.notAnalysed, Suppressed: run.Suppressed, Hidden: run.Hidden}
}

// statistics counts the findings by rule and severity, most frequent first
// (ties by rule, then most severe first).
func (t *tally) statistics() []RuleCount {
	out := make([]RuleCount, 0, len(t.rules))
	for k, n := range t.rules {
		out = append(out, RuleCount{Rule: k.rule, Severity: k.sev, Count: n})
	}
	slices.SortFunc(out, func(a, b RuleCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Rule, b.Rule), cmp.Compare(b.Severity, a.Severity))
	})
	return out
}

// ruleIDs are the rules with findings, sorted.
func (t *tally) ruleIDs() []string {
	ids := make([]string, 0, len(t.maxSeverity))
	for id := range t.maxSeverity {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// spoolMemory is how much of a format's file part a spool keeps in memory
// before it moves it to a temporary file (a variable for the tests).
var spoolMemory = 1 << 20

// spool keeps the part of a report that comes after its totals until they
// are known. The first error writing it is kept and returned by reader.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	bw   *bufio.Writer
	n    int64
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.n += int64(len(p))
	if s.file == nil && s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "rollout-report-*")
		if err != nil {
			s.err = fmt.Errorf("spooling the report: %w", err)
			return 0, s.err
		}
		s.file, s.bw = f, bufio.NewWriterSize(f, 64<<10)
		s.bw.Write(s.mem.Bytes())
		s.mem = bytes.Buffer{}
	}
	if _, err := s.bw.Write(p); err != nil {
		s.err = fmt.Errorf("spooling the report: %w", err)
		return 0, s.err
	}
	return len(p), nil
}

// empty reports whether nothing was spooled.
func (s *spool) empty() bool { return s.n == 0 }

// reader returns what was spooled, from the start.
func (s *spool) reader() (io.Reader, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if err := s.bw.Flush(); err != nil {
		return nil, fmt.Errorf("spooling the report: %w", err)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spooling the report: %w", err)
	}
	return bufio.NewReaderSize(s.file, 64<<10), nil
}

// copyTo writes what was spooled to w.
func (s *spool) copyTo(w io.Writer) error {
	r, err := s.reader()
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}

func (s *spool) release() {
	s.mem = bytes.Buffer{}
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
		s.file = nil
	}
}

// noSpool is embedded by the formats that write as they go.
type noSpool struct{}

func (noSpool) release() {}
