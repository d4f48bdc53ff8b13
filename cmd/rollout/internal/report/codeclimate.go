package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/rollout-dev/rollout/checks"
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

// printCodeClimate writes the issues as one indented JSON array ([] when
// clean), a file not analysed as an issue named "not-analysed/CODE" at line
// 1. The fingerprint is SARIF's partial fingerprint. Paths are
// slash-separated, as GitLab links them to the repository.
func printCodeClimate(w io.Writer, r *Report, _ Options) error {
	issues := []codeClimateIssue{}
	for i := range r.Files {
		f := &r.Files[i]
		path := filepath.ToSlash(f.Path)
		if f.Error != nil {
			check := "not-analysed/" + f.Error.Code
			issues = append(issues, codeClimateIssue{
				Description: notAnalysed(f.Error),
				CheckName:   check,
				Fingerprint: sarifFingerprint(check, f.Path, 0, f.Error.Message),
				Severity:    "critical",
				Location:    codeClimateLocation{Path: path, Lines: codeClimateLines{Begin: 1}},
			})
		}
		for _, fd := range f.Findings {
			issues = append(issues, codeClimateIssue{
				Description: fd.Message,
				CheckName:   fd.Rule,
				Fingerprint: sarifFingerprint(fd.Rule, f.Path, fd.Line, fd.Message),
				Severity:    codeClimateSeverity(fd.Severity),
				Location:    codeClimateLocation{Path: path, Lines: codeClimateLines{Begin: max(fd.Line, 1)}},
			})
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(issues); err != nil {
		return fmt.Errorf("encode codeclimate report: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write codeclimate report: %w", err)
	}
	return nil
}
