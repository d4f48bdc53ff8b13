package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// The Code Climate issue subset that GitLab's Code Quality report
// (artifacts:reports:codequality) reads: a JSON array of issues, each with
// a description, a check name, a fingerprint, a severity and a location.
// GitLab compares the fingerprints of a merge request's report with those of
// its target branch to show what is new.

type codeClimateIssue struct {
	Description string              `json:"description"`
	CheckName   string              `json:"check_name"`
	Fingerprint string              `json:"fingerprint"`
	Severity    string              `json:"severity"` // info, minor, major, critical or blocker
	Location    codeClimateLocation `json:"location"`
}

type codeClimateLocation struct {
	Path  string           `json:"path"`
	Lines codeClimateLines `json:"lines"`
}

type codeClimateLines struct {
	Begin int `json:"begin"`
}

// codeClimateSeverity follows the common mapping of linters' GitLab
// formatters: error major, warning minor, info info. A file not analysed is
// critical: its findings are unknown.
func codeClimateSeverity(s checks.Severity) string {
	switch s {
	case checks.Error:
		return "major"
	case checks.Warning:
		return "minor"
	}
	return "info"
}

// codeClimateStream writes the issues as one indented JSON array ([] when
// clean), a file not analysed as an issue named "not-analysed/CODE" at line
// 1. The fingerprint is SARIF's partial fingerprint. Paths are
// slash-separated, as GitLab links them to the repository. Each file's
// issues are written as the file comes.
type codeClimateStream struct {
	noSpool
	bw     *bufio.Writer
	o      Options
	buf    bytes.Buffer
	enc    *json.Encoder
	issues int
}

func newCodeClimateStream(w io.Writer, o Options) formatStream {
	s := &codeClimateStream{bw: bufio.NewWriter(w), o: o}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.enc.SetIndent("  ", "  ")
	return s
}

func (s *codeClimateStream) issue(is codeClimateIssue) error {
	s.buf.Reset()
	if err := s.enc.Encode(is); err != nil {
		return fmt.Errorf("encode codeclimate report: %w", err)
	}
	if s.issues == 0 {
		s.bw.WriteString("[\n  ")
	} else {
		s.bw.WriteString(",\n  ")
	}
	s.issues++
	s.bw.Write(s.buf.Bytes()[:s.buf.Len()-1]) // without Encode's newline
	return nil
}

func (s *codeClimateStream) file(f *result.FileResult, _ *result.Tally) error {
	// Relative to the source root: GitLab maps them to the repository's files.
	path, _ := s.o.fromRoot(f.Path)
	if f.Error != nil {
		check := "not-analysed/" + f.Error.Code
		if err := s.issue(codeClimateIssue{
			Description: notAnalysed(f.Error),
			CheckName:   check,
			Fingerprint: sarifFingerprint(check, f.Path, 0, f.Error.Message),
			Severity:    "critical",
			Location:    codeClimateLocation{Path: path, Lines: codeClimateLines{Begin: 1}},
		}); err != nil {
			return err
		}
	}
	for _, fd := range f.Findings {
		if err := s.issue(codeClimateIssue{
			Description: fd.Message,
			CheckName:   fd.Rule,
			Fingerprint: sarifFingerprint(fd.Rule, f.Path, fd.Line, fd.Message),
			Severity:    codeClimateSeverity(fd.Severity),
			Location:    codeClimateLocation{Path: path, Lines: codeClimateLines{Begin: max(fd.Line, 1)}},
		}); err != nil {
			return err
		}
	}
	return wrapWrite("codeclimate", s.bw.Flush())
}

func (s *codeClimateStream) finish(*result.Report, *result.Tally) error {
	if s.issues == 0 {
		s.bw.WriteString("[]\n")
	} else {
		s.bw.WriteString("\n]\n")
	}
	return wrapWrite("codeclimate", s.bw.Flush())
}
