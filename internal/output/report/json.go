package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// The JSON report schema (docs: shared spec cli.md), version schemaVersion.
// These types are the public contract; they are filled from the internal
// types, never the other way round. Field order here is the key order of the
// output. Slices are never nil, so they encode as [], never null.

type jsonReport struct {
	schema.Header
	Summary  jsonSummary      `json:"summary"`
	Notes    []string         `json:"notes"`
	Settings *result.Settings `json:"settings,omitempty"`
	// Shard is present only in the report of a shard (--shard K/N).
	Shard *shard.Spec `json:"shard,omitempty"`
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
	// Checked is what a run that reads no records counted (home).
	Checked string `json:"checked,omitempty"`
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

// jsonFile: era, history_mode, cli_version, thread_id, rollout_id and
// lineage_root are "" when unknown. The facts from rollout_id on were
// added in place (schema version 1 is additive): a report without them
// reads as zero. size and version are there when known; depends_on,
// hidden, suppressed and incomplete only when not empty, so that they add
// nothing to an ordinary file's entry.
type jsonFile struct {
	Path        string         `json:"path"`
	Records     int            `json:"records"`
	Era         string         `json:"era"`
	HistoryMode string         `json:"history_mode"`
	CLIVersion  string         `json:"cli_version"`
	ThreadID    string         `json:"thread_id"`
	RolloutID   string         `json:"rollout_id"`
	LineageRoot string         `json:"lineage_root"`
	Turns       int            `json:"turns"`
	Tokens      int64          `json:"tokens"`
	Compactions int            `json:"compactions"`
	Size        *int64         `json:"size,omitempty"`
	Version     string         `json:"version,omitempty"`
	DependsOn   []string       `json:"depends_on,omitempty"`
	Hidden      int            `json:"hidden,omitempty"`
	Suppressed  int            `json:"suppressed,omitempty"`
	Incomplete  bool           `json:"incomplete,omitempty"`
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
	ev := fd.EvidenceMap()
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

// newJSONFile is a file without its findings, which are encoded one by
// one (jsonStream.file).
func newJSONFile(f *result.FileResult) jsonFile {
	jf := jsonFile{
		Path:        f.Path,
		Records:     f.Records,
		Era:         f.Era,
		HistoryMode: f.HistoryMode,
		CLIVersion:  f.CLIVersion,
		ThreadID:    f.ThreadID,
		RolloutID:   f.RolloutID,
		LineageRoot: f.LineageRoot,
		Turns:       f.Turns,
		Tokens:      f.Tokens,
		Compactions: f.Compactions,
		Version:     f.Version,
		DependsOn:   f.DependsOn,
		Hidden:      f.Hidden,
		Suppressed:  f.Suppressed,
		Incomplete:  f.Incomplete,
		Findings:    []jsonFinding{},
	}
	if f.Version != "" {
		jf.Size = &f.Size
	}
	if f.Error != nil {
		jf.Error = &jsonFileError{f.Error.Code, f.Error.Message}
	}
	return jf
}

// The indents of an element of "files" and of its "findings" in the
// document.
const (
	jsonFileIndent    = "    "
	jsonFindingIndent = jsonFileIndent + "    "
)

// jsonStream writes the whole report as one JSON document, indented by two
// spaces, without HTML escaping, ending with a newline. The summary comes
// before the files: each file is encoded, as the document holds it, into a
// spool until Close. Nothing is written if a file cannot be encoded.
type jsonStream struct {
	w             io.Writer
	o             Options
	files         spool
	buf           bytes.Buffer
	fileEnc, item *json.Encoder
}

func newJSONStream(w io.Writer, o Options) formatStream {
	s := &jsonStream{w: w, o: o}
	s.fileEnc = json.NewEncoder(&s.buf)
	s.fileEnc.SetEscapeHTML(false)
	s.fileEnc.SetIndent(jsonFileIndent, "  ")
	s.item = json.NewEncoder(&s.buf)
	s.item.SetEscapeHTML(false)
	s.item.SetIndent(jsonFindingIndent, "  ")
	return s
}

// file spools one element of "files", a finding at a time.
func (s *jsonStream) file(f *result.FileResult, _ *result.Tally) error {
	s.buf.Reset()
	if s.files.empty() {
		s.buf.WriteString("\n" + jsonFileIndent)
	} else {
		s.buf.WriteString(",\n" + jsonFileIndent)
	}
	if err := s.fileEnc.Encode(newJSONFile(f)); err != nil {
		return fmt.Errorf("encode json report: %w", err)
	}
	if len(f.Findings) == 0 {
		s.buf.Truncate(s.buf.Len() - 1) // Encode's newline
		_, err := s.files.Write(s.buf.Bytes())
		return err
	}
	// "findings", empty here, is the file's last field.
	const noFindings = "[]\n" + jsonFileIndent + "}\n"
	s.buf.Truncate(s.buf.Len() - len(noFindings))
	s.buf.WriteByte('[')
	for j := range f.Findings {
		if j > 0 {
			s.buf.WriteByte(',')
		}
		s.buf.WriteString("\n" + jsonFindingIndent)
		if err := s.item.Encode(newJSONFinding(&f.Findings[j])); err != nil {
			return fmt.Errorf("encode json report: %s line %d: %w", f.Path, f.Findings[j].Line, err)
		}
		s.buf.Truncate(s.buf.Len() - 1)
		if s.buf.Len() >= 64<<10 {
			if _, err := s.files.Write(s.buf.Bytes()); err != nil {
				return err
			}
			s.buf.Reset()
		}
	}
	s.buf.WriteString("\n" + jsonFileIndent + "  ]\n" + jsonFileIndent + "}")
	_, err := s.files.Write(s.buf.Bytes())
	return err
}

// reportSchema is the schema of run's report: home's has its own name and
// command, the shape of verify's (docs/schema/home-report.v1.json).
func reportSchema(run *result.Report) schema.Name {
	if run.Command == "home" {
		return schema.HomeReport
	}
	return schema.VerifyReport
}

func (s *jsonStream) finish(r *result.Report, t *result.Tally) error {
	head := jsonReport{
		Header: schema.Header{Schema: reportSchema(r), SchemaVersion: schemaVersion,
			Tool: r.Tool, Version: r.Version, Command: r.Command},
		Summary:  jsonSummary(t.Summary(r)),
		Notes:    r.Notes,
		Settings: r.Settings,
		Shard:    r.Shard,
		Files:    []jsonFile{},
	}
	if head.Notes == nil {
		head.Notes = []string{}
	}
	if s.o.Statistics {
		for _, rc := range t.Statistics() {
			head.Statistics = append(head.Statistics, jsonRuleCount{rc.Rule, severityName(rc.Severity), rc.Count})
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(head); err != nil {
		return fmt.Errorf("encode json report: %w", err)
	}
	// The files, empty here, are the document's last field.
	const noFiles = "[]\n}\n"
	if s.files.empty() {
		_, err := s.w.Write(buf.Bytes())
		return wrapWrite("json", err)
	}
	bw := bufio.NewWriterSize(s.w, 64<<10)
	bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte(noFiles)))
	bw.WriteString("[")
	if err := s.files.copyTo(bw); err != nil {
		return wrapWrite("json", err)
	}
	bw.WriteString("\n  ]\n}\n")
	return wrapWrite("json", bw.Flush())
}

func (s *jsonStream) release() { s.files.release() }

// wrapWrite says which report failed to be written; nil stays nil.
func wrapWrite(format string, err error) error {
	if err != nil {
		return fmt.Errorf("write %s report: %w", format, err)
	}
	return nil
}

// jsonlStream writes one compact JSON object per finding and per line, and
// one per file not analysed (jsonlFileError) before that file's findings.
// Nothing is written for a clean report. A finding that cannot be encoded
// stops the output after the previous complete line.
type jsonlStream struct {
	noSpool
	bw   *bufio.Writer
	line bytes.Buffer
	enc  *json.Encoder
}

func newJSONLStream(w io.Writer, _ Options) formatStream {
	s := &jsonlStream{bw: bufio.NewWriter(w)}
	s.enc = json.NewEncoder(&s.line)
	s.enc.SetEscapeHTML(false)
	return s
}

func (s *jsonlStream) file(f *result.FileResult, _ *result.Tally) error {
	bw, enc := s.bw, s.enc
	if f.Error != nil {
		s.line.Reset()
		if err := enc.Encode(jsonlFileError{f.Path, jsonFileError{f.Error.Code, f.Error.Message}}); err != nil {
			bw.Flush()
			return fmt.Errorf("encode jsonl report: %s: %w", f.Path, err)
		}
		bw.Write(s.line.Bytes())
	}
	for j := range f.Findings {
		s.line.Reset()
		if err := enc.Encode(jsonlFinding{Path: f.Path, jsonFinding: newJSONFinding(&f.Findings[j])}); err != nil {
			bw.Flush()
			return fmt.Errorf("encode jsonl report: %s line %d: %w", f.Path, f.Findings[j].Line, err)
		}
		bw.Write(s.line.Bytes())
	}
	return wrapWrite("jsonl", bw.Flush())
}

func (s *jsonlStream) finish(*result.Report, *result.Tally) error {
	return wrapWrite("jsonl", s.bw.Flush())
}
