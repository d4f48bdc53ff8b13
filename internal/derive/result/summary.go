package result

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/checks"
)

// Summary counts files, records and findings by severity.
type Summary struct {
	Files, Records, Errors, Warnings, Infos int
	// NotAnalysed counts the files with an Error.
	NotAnalysed int
	Suppressed  int
	Hidden      int
	Checked     string // Report.Checked
}

// Summary counts the report. A finding whose severity is none of error,
// warning or info is not counted.
func (r *Report) Summary() Summary {
	var t Tally
	for i := range r.Files {
		t.Add(&r.Files[i])
	}
	return t.Summary(r)
}

// RuleCount is one row of --statistics: how many findings of a rule, at a
// severity, the report holds.
type RuleCount struct {
	Rule     string
	Severity checks.Severity
	Count    int
}

// Statistics counts the findings by rule and severity, most frequent first
// (ties by rule, then most severe first).
func (r *Report) Statistics() []RuleCount {
	var t Tally
	for i := range r.Files {
		t.Add(&r.Files[i])
	}
	return t.Statistics()
}

// Tally counts a report while its files arrive, so that a printer
// streaming them knows the totals at the end. The zero value is empty.
type Tally struct {
	files, records, notAnalysed int
	errors, warnings, infos     int
	rules                       map[ruleSeverity]int
	// first and highest severity seen per rule.
	firstSeverity, maxSeverity map[string]checks.Severity
}

type ruleSeverity struct {
	rule string
	sev  checks.Severity
}

// Add counts one file.
func (t *Tally) Add(f *FileResult) {
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

// Summary is the count so far, with the run's suppressed and hidden
// findings, which no file holds.
func (t *Tally) Summary(run *Report) Summary {
	return Summary{Files: t.files, Records: t.records, Errors: t.errors, Warnings: t.warnings, Infos: t.infos,
		NotAnalysed: t.notAnalysed, Suppressed: run.Suppressed, Hidden: run.Hidden, Checked: run.Checked}
}

// Statistics counts the findings by rule and severity, most frequent first
// (ties by rule, then most severe first).
func (t *Tally) Statistics() []RuleCount {
	out := make([]RuleCount, 0, len(t.rules))
	for k, n := range t.rules {
		out = append(out, RuleCount{Rule: k.rule, Severity: k.sev, Count: n})
	}
	slices.SortFunc(out, func(a, b RuleCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Rule, b.Rule), cmp.Compare(b.Severity, a.Severity))
	})
	return out
}

// RuleIDs are the rules with findings, sorted.
func (t *Tally) RuleIDs() []string {
	ids := make([]string, 0, len(t.maxSeverity))
	for id := range t.maxSeverity {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Findings counts the findings of a rule, at every severity.
func (t *Tally) Findings(rule string) int {
	n := 0
	for k, c := range t.rules {
		if k.rule == rule {
			n += c
		}
	}
	return n
}

// FirstSeverity is the severity of the first finding of a rule.
func (t *Tally) FirstSeverity(rule string) checks.Severity { return t.firstSeverity[rule] }

// MaxSeverity is the highest severity of a rule's findings.
func (t *Tally) MaxSeverity(rule string) checks.Severity { return t.maxSeverity[rule] }
