package policy

import (
	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
)

// finding is a finding of rule at line, at severity sev.
func finding(rule string, line int, sev checks.Severity) checks.Finding {
	return checks.Finding{Rule: rule, Severity: sev, Path: "s/a.jsonl", Line: line, Message: rule + " here"}
}

// analysed is the Input of a file the rules read to its end.
func analysed(path, thread string, fs ...checks.Finding) Input {
	return Input{Path: path, Result: &checks.Result{Path: path, Records: 9, Findings: fs,
		State: &reconstruct.State{Era: "modern", ThreadID: thread}}}
}

// rules lists the rule of each finding of f, in order.
func rules(f *file) []string {
	out := []string{}
	for _, fd := range f.entry.Findings {
		out = append(out, fd.Rule)
	}
	return out
}
