// Package policy is what verify does to each file's findings after the
// rules and before the printers: one ordered list of named steps (see New)
// that filters the findings by rule, fingerprints them, records or
// suppresses them with a baseline, ranks the file for the exit code, hides
// what is below the displayed severity and puts the rest in canonical order.
// It sits in the derive stage, after checks/ and internal/derive/result and
// below cmd/rollout. Analyse runs the checks on a run's files on a pool of
// workers and hands each, in report order, to the command, which passes it
// through the steps and streams what they return. Besides the checks' own
// reading, it reads a rollout only to hash the records findings are on
// (HashRecords), and prints nothing.
package policy

import (
	"io"
	"slices"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// Options are the settings of a run that decide what each file's result
// keeps and how the run ends.
type Options struct {
	Filter checks.Filter   // --select, --ignore
	Config *config.Config  // per-path ignores; nil when no config file applies
	FailOn checks.Severity // the lowest severity that fails the run
	Show   checks.Severity // the lowest severity displayed
	// Baseline suppresses the findings it accepted (--baseline); nil
	// without one.
	Baseline *Accepted
	// WriteBaseline records every finding, and counts it as suppressed
	// (--write-baseline); it supersedes Baseline.
	WriteBaseline bool
}

// A step is one named stage of the post-processing of a file. Each reads
// and changes the file in place; the ones that keep state (the baseline)
// keep it across the files of a run.
type step interface {
	name() string
	process(f *file)
}

// Pipeline runs the steps over each file of a run, in report order, and
// keeps the run's totals. Not safe for concurrent use.
type Pipeline struct {
	steps  []step
	record *recorder // nil without --write-baseline
	hashes bool      // the fingerprints need the records' hashes
	failOn checks.Severity

	status             Status
	suppressed, hidden int
}

// New builds the pipeline of a run. The list is the order: the exit code
// counts what the filters and the baseline keep, not what is hidden; a
// file that was not analysed to its end ranks so before any filter.
func New(o Options) *Pipeline {
	p := &Pipeline{failOn: o.FailOn}
	accepted := o.Baseline
	if o.WriteBaseline {
		p.record, accepted = &recorder{}, nil
	}
	p.hashes = p.record != nil || accepted != nil
	p.steps = []step{
		rankErrors{},
		ruleFilter{o.Filter, o.Config},
		fingerprinter{on: p.hashes},
		recordBaseline{p.record},
		suppressBaseline{accepted},
		rankFailOn{o.FailOn},
		hideBelow{o.Show},
		normalize{},
	}
	return p
}

// File runs the steps over one analysed file and returns its entry in the
// report, normalized.
func (p *Pipeline) File(in Input) *result.FileResult {
	if in.Reused != nil {
		return p.reused(in.Reused)
	}
	f := newFile(in)
	for _, s := range p.steps {
		s.process(f)
	}
	f.entry.Hidden, f.entry.Suppressed = f.hidden, f.suppressed
	p.status = max(p.status, f.status)
	p.suppressed += f.suppressed
	p.hidden += f.hidden
	return &f.entry
}

// reused ranks and counts an entry of the previous run as its file did
// then. It had no error (those are read again), and its hidden findings
// were below --fail-on (incremental.Previous.Reuse reads the file again
// otherwise), so what it lists and Incomplete rank it.
func (p *Pipeline) reused(e *result.FileResult) *result.FileResult {
	if e.Incomplete {
		p.status = max(p.status, Incomplete)
	}
	if slices.ContainsFunc(e.Findings, func(fd checks.Finding) bool { return fd.Severity >= p.failOn }) {
		p.status = max(p.status, Failed)
	}
	p.suppressed += e.Suppressed
	p.hidden += e.Hidden
	return e
}

// NeedsHashes reports whether the Input of each file must carry the hashes
// of the records its findings are on (HashRecords): the baseline's
// fingerprints are made of them.
func (p *Pipeline) NeedsHashes() bool { return p.hashes }

// Status is the run's rank so far: that of its worst file.
func (p *Pipeline) Status() Status { return p.status }

// Suppressed counts the findings the baseline left out, or recorded with
// --write-baseline.
func (p *Pipeline) Suppressed() int { return p.suppressed }

// Hidden counts the findings below the displayed severity.
func (p *Pipeline) Hidden() int { return p.hidden }

// Recording reports whether the run records a baseline (--write-baseline).
func (p *Pipeline) Recording() bool { return p.record != nil }

// WriteBaseline writes the baseline recorded so far, named as written by
// tool. It writes nothing when the run records none.
func (p *Pipeline) WriteBaseline(w io.Writer, tool string) error {
	if p.record == nil {
		return nil
	}
	return writeBaseline(w, p.record.file(tool))
}
