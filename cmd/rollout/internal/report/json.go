package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rollout-dev/rollout/checks"
)

// The JSON report schema (docs: shared spec cli.md), version SchemaVersion.
// These types are the public contract; they are filled from the internal
// types, never the other way round. Field order here is the key order of the
// output. Slices are never nil, so they encode as [], never null.

type jsonReport struct {
	SchemaVersion int         `json:"schema_version"`
	Tool          string      `json:"tool"`
	Version       string      `json:"version"`
	Command       string      `json:"command"`
	Summary       jsonSummary `json:"summary"`
	Notes         []string    `json:"notes"`
	// Statistics is present only with --statistics.
	Statistics []jsonRuleCount `json:"statistics,omitempty"`
	Files      []jsonFile      `json:"files"`
}

type jsonSummary struct {
	Files       int `json:"files"`
	Records     int `json:"records"`
	Errors      int `json:"errors"`
	Warnings    int `json:"warnings"`
	Infos       int `json:"infos"`
	NotAnalysed int `json:"not_analysed"`
	Suppressed  int `json:"suppressed"` // by --baseline
	Hidden      int `json:"hidden"`     // below --show-severity or --quiet
}

type jsonRuleCount struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Count    int    `json:"count"`
}

// jsonFileError is files[].error, present only when the file could not be
// analysed (or not to its end).
type jsonFileError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// jsonFile: era, history_mode, cli_version and thread_id are "" when unknown.
type jsonFile struct {
	Path        string         `json:"path"`
	Records     int            `json:"records"`
	Era         string         `json:"era"`
	HistoryMode string         `json:"history_mode"`
	CLIVersion  string         `json:"cli_version"`
	ThreadID    string         `json:"thread_id"`
	Error       *jsonFileError `json:"error,omitempty"`
	Findings    []jsonFinding  `json:"findings"`
}

type jsonFinding struct {
	Rule       string         `json:"rule"`
	Severity   string         `json:"severity"`
	Line       int            `json:"line"`
	ByteOffset int64          `json:"byte_offset"`
	Ordinal    *int64         `json:"ordinal"` // null when the record has none
	Message    string         `json:"message"`
	Fixable    bool           `json:"fixable"`
	Evidence   map[string]any `json:"evidence"` // {} when empty
}

// jsonlFinding is one line of --format jsonl: the finding with its path
// first.
type jsonlFinding struct {
	Path string `json:"path"`
	jsonFinding
}

// jsonlFileError is the line of --format jsonl for a file not analysed: it
// has "error" where a finding has "rule".
type jsonlFileError struct {
	Path  string        `json:"path"`
	Error jsonFileError `json:"error"`
}

func newJSONFinding(fd *checks.Finding) jsonFinding {
	ev := fd.Evidence
	if ev == nil {
		ev = map[string]any{}
	}
	return jsonFinding{
		Rule:       fd.Rule,
		Severity:   severityName(fd.Severity),
		Line:       fd.Line,
		ByteOffset: fd.ByteOffset,
		Ordinal:    fd.Ordinal,
		Message:    fd.Message,
		Fixable:    fd.Fixable,
		Evidence:   ev,
	}
}

func newJSONReport(r *Report, o Options) jsonReport {
	s := r.Summary()
	out := jsonReport{
		SchemaVersion: SchemaVersion,
		Tool:          r.Tool,
		Version:       r.Version,
		Command:       r.Command,
		Summary:       jsonSummary(s),
		Notes:         r.Notes,
		Files:         make([]jsonFile, 0, len(r.Files)),
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if o.Statistics {
		for _, rc := range r.Statistics() {
			out.Statistics = append(out.Statistics, jsonRuleCount{rc.Rule, severityName(rc.Severity), rc.Count})
		}
	}
	for i := range r.Files {
		f := &r.Files[i]
		jf := jsonFile{
			Path:        f.Path,
			Records:     f.Records,
			Era:         f.Era,
			HistoryMode: f.HistoryMode,
			CLIVersion:  f.CLIVersion,
			ThreadID:    f.ThreadID,
			Findings:    make([]jsonFinding, 0, len(f.Findings)),
		}
		if f.Error != nil {
			jf.Error = &jsonFileError{f.Error.Code, f.Error.Message}
		}
		for j := range f.Findings {
			jf.Findings = append(jf.Findings, newJSONFinding(&f.Findings[j]))
		}
		out.Files = append(out.Files, jf)
	}
	return out
}

// printJSON writes the whole report as one JSON document, indented by two
// spaces, without HTML escaping, ending with a newline. Nothing is written
// if the report cannot be encoded.
func printJSON(w io.Writer, r *Report, o Options) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(newJSONReport(r, o)); err != nil {
		return fmt.Errorf("encode json report: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// printJSONL writes one compact JSON object per finding and per line, and
// one per file not analysed (jsonlFileError) before that file's findings.
// Nothing is written for a clean report. A finding that cannot be encoded
// stops the output after the previous complete line.
func printJSONL(w io.Writer, r *Report, _ Options) error {
	bw := bufio.NewWriter(w)
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	for i := range r.Files {
		f := &r.Files[i]
		if f.Error != nil {
			line.Reset()
			if err := enc.Encode(jsonlFileError{f.Path, jsonFileError{f.Error.Code, f.Error.Message}}); err != nil {
				bw.Flush()
				return fmt.Errorf("encode jsonl report: %s: %w", f.Path, err)
			}
			bw.Write(line.Bytes())
		}
		for j := range f.Findings {
			line.Reset()
			if err := enc.Encode(jsonlFinding{Path: f.Path, jsonFinding: newJSONFinding(&f.Findings[j])}); err != nil {
				bw.Flush()
				return fmt.Errorf("encode jsonl report: %s line %d: %w", f.Path, f.Findings[j].Line, err)
			}
			bw.Write(line.Bytes())
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write jsonl report: %w", err)
	}
	return nil
}
