// Package checks is the rule registry: it turns the observations of the
// reconstruction engine into findings, each with a stable rule id, and plans
// the edits that fix them. It sits after reconstruct/ in the data flow and
// before the printers and the writer; it never prints.
package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Severity orders findings; the zero value is Info.
type Severity int

const (
	Info Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// ParseSeverity reads "info", "warning" or "error".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "info":
		return Info, nil
	case "warning":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return Info, fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// Finding is one inconsistency found in one file.
type Finding struct {
	Rule       string
	Severity   Severity
	Path       string
	Line       int   // 1-based physical line
	ByteOffset int64 // offset of the start of the line
	Ordinal    *int64
	Message    string
	Fixable    bool
	// Incomplete: part of the file was not analysed (Rule.Incomplete).
	Incomplete bool
	// Facts is the observation's typed evidence (a reconstruct.XxxEvidence
	// of the rule's kind): what fix planners read.
	Facts reconstruct.Evidence
	// Evidence is set only where there are no Facts to derive it from: a
	// finding read back from a JSON report, the summary of a rule past
	// --max-findings-per-rule. Read it with EvidenceMap.
	Evidence map[string]any
}

// EvidenceMap is the evidence as the JSON report writes it, keyed by the
// JSON names of its fields: Evidence when set, else Facts converted now. A
// finding keeps its facts typed and gets the map only when a machine format
// prints it (a map per finding cost about 300 bytes).
func (f *Finding) EvidenceMap() map[string]any {
	if f.Evidence != nil || f.Facts == nil {
		return f.Evidence
	}
	return evidenceJSON(f.Facts)
}
