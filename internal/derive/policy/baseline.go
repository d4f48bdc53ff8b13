package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// The baseline records the findings a team accepts (`rollout verify
// --write-baseline FILE`) so that later runs (`--baseline FILE`) report only
// new ones, matched by fingerprint (fingerprint.go). Several findings with
// one fingerprint (two identical blank lines) are counted: the baseline
// suppresses as many as it recorded.

// baselineVersion is the version of the baseline file format.
const baselineVersion = 1

// baselineFile is the baseline file: a JSON document, sorted, one entry per
// fingerprint. Rule, path, line and message are there for the people who
// review the file; only the fingerprint and the count are matched.
type baselineFile struct {
	Version  int             `json:"version"`
	Tool     string          `json:"tool"`
	Findings []baselineEntry `json:"findings"`
}

// baselineEntry is one accepted finding (Count of them with the same
// fingerprint).
type baselineEntry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Path        string `json:"path"`
	Line        int    `json:"line"`
	Message     string `json:"message"`
	Count       int    `json:"count"`
}

// recordBaseline records every finding in the baseline being written
// (--write-baseline) and leaves it out, counted as suppressed: the run
// reports as the next one will with that baseline.
type recordBaseline struct{ r *recorder } // nil: no baseline written

func (recordBaseline) name() string { return "write-baseline" }

func (s recordBaseline) process(f *file) {
	if s.r == nil {
		return
	}
	for i, fd := range f.entry.Findings {
		s.r.add(f.fingerprints[i], fd.Rule, f.entry.Path, fd.Line, fd.Message)
	}
	f.suppressed += f.keep(func(int) bool { return false })
}

// suppressBaseline leaves out the findings the baseline accepted
// (--baseline), counted as suppressed.
type suppressBaseline struct{ accepted *Accepted } // nil: no baseline read

func (suppressBaseline) name() string { return "baseline" }

func (s suppressBaseline) process(f *file) {
	if s.accepted == nil {
		return
	}
	f.suppressed += f.keep(func(i int) bool { return !s.accepted.suppress(f.fingerprints[i]) })
}

// recorder collects the findings of a run into a baseline file.
type recorder struct {
	byFP map[string]*baselineEntry
}

// add records one finding.
func (b *recorder) add(fingerprint, rule, path string, line int, message string) {
	if b.byFP == nil {
		b.byFP = map[string]*baselineEntry{}
	}
	if e, ok := b.byFP[fingerprint]; ok {
		e.Count++
		return
	}
	b.byFP[fingerprint] = &baselineEntry{Fingerprint: fingerprint, Rule: rule, Path: filepath.ToSlash(path), Line: line, Message: message, Count: 1}
}

// file returns the baseline, entries sorted by (path, line, rule,
// fingerprint) so that it diffs well under version control.
func (b *recorder) file(tool string) baselineFile {
	f := baselineFile{Version: baselineVersion, Tool: tool, Findings: make([]baselineEntry, 0, len(b.byFP))}
	for _, e := range b.byFP {
		f.Findings = append(f.Findings, *e)
	}
	slices.SortFunc(f.Findings, func(a, b baselineEntry) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Fingerprint, b.Fingerprint)
	})
	return f
}

// writeBaseline encodes a baseline file, indented, ending with a newline.
func writeBaseline(w io.Writer, f baselineFile) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// Accepted is a baseline read: how many findings of each fingerprint are
// still to be suppressed.
type Accepted struct {
	remaining map[string]int
}

// ReadBaseline loads a baseline file. It fails on another version or a
// malformed file, naming what is wrong.
func ReadBaseline(r io.Reader) (*Accepted, error) {
	var f baselineFile
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a rollout baseline: %w", err)
	}
	if f.Version != baselineVersion {
		return nil, fmt.Errorf("baseline version %d, want %d (write it again with --write-baseline)", f.Version, baselineVersion)
	}
	s := &Accepted{remaining: make(map[string]int, len(f.Findings))}
	for _, e := range f.Findings {
		s.remaining[e.Fingerprint] += max(e.Count, 1)
	}
	return s, nil
}

// suppress reports whether a finding with this fingerprint is in the
// baseline, and uses up one of its count.
func (s *Accepted) suppress(fingerprint string) bool {
	if s.remaining[fingerprint] > 0 {
		s.remaining[fingerprint]--
		return true
	}
	return false
}
