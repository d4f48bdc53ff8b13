package policy

import (
	"errors"
	"slices"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Status ranks a file, and a run, for verify's exit code, in rising
// priority: a run is as bad as its worst file. The command maps each to
// its exit code.
type Status int

const (
	Clean      Status = iota
	Failed            // a finding at or above --fail-on
	Incomplete        // part of a file, or a walked entry, was not analysed
	Unusable          // a named input could not be read at all
	Internal          // a bug, caught and reported
)

// ReadStatus ranks a named input that could not be read: one that failed
// part-way, or an entry a directory walk could not use, leaves the run
// incomplete; one that could not be read at all (missing, unreadable, not
// a rollout) is unusable.
func ReadStatus(err error) Status {
	var re *reconstruct.ReadError
	var we *rollout.WalkError
	if errors.As(err, &re) || errors.As(err, &we) {
		return Incomplete
	}
	return Unusable
}

// ReportStatus ranks a whole report read back (merge): a file that was not
// analysed, to its end or at all, leaves it incomplete (internal for a
// bug); a finding at or above failOn fails it.
func ReportStatus(r *result.Report, failOn checks.Severity) Status {
	s := Clean
	for _, f := range r.Files {
		switch {
		case f.Error != nil && f.Error.Code == result.ErrInternal:
			s = max(s, Internal)
		case f.Error != nil, f.Incomplete:
			s = max(s, Incomplete)
		case slices.ContainsFunc(f.Findings, func(fd checks.Finding) bool { return fd.Severity >= failOn }):
			s = max(s, Failed)
		}
	}
	return s
}

// rankErrors ranks a file that was not analysed to its end, before any
// filter: a finding that says so counts even when it is not listed.
type rankErrors struct{}

func (rankErrors) name() string { return "errors" }

func (rankErrors) process(f *file) {
	var ie *reconstruct.InternalError
	switch {
	case f.Err == nil:
	case errors.As(f.Err, &ie):
		f.status = max(f.status, Internal)
	case f.Named:
		f.status = max(f.status, ReadStatus(f.Err))
	default:
		// Found by a walk: the run over that directory is incomplete.
		f.status = max(f.status, Incomplete)
	}
	if f.Result != nil && slices.ContainsFunc(f.Result.Findings, func(fd checks.Finding) bool { return fd.Incomplete }) {
		f.status = max(f.status, Incomplete)
		f.entry.Incomplete = true
	}
}

// rankFailOn fails the file when a finding the filters and the baseline
// kept is at or above --fail-on, shown or not.
type rankFailOn struct{ min checks.Severity }

func (rankFailOn) name() string { return "fail-on" }

func (s rankFailOn) process(f *file) {
	if slices.ContainsFunc(f.entry.Findings, func(fd checks.Finding) bool { return fd.Severity >= s.min }) {
		f.status = max(f.status, Failed)
	}
}
