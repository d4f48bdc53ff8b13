// Package incremental decides which files an incremental verify run
// (verify --since PREVIOUS) need not read: those whose previous result
// still holds, because the file is stored as it was then (same size and
// version) and nothing else the result depended on can have changed. It
// sits in the derive stage beside result, whose entries it hands back
// unchanged, and policy, whose Analyse asks it before reading each file.
// The previous report is the only state: a file users keep anyway.
//
// A changed file is read whole. Resuming its replay at the end of the part
// verified before would need the engine's state at that offset, which is
// not serialisable: a known gap (docs/scale.md, "Incremental runs").
package incremental

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// Run is what the new run is, as far as reuse cares.
type Run struct {
	Version  string           // the tool's
	Settings *result.Settings // as the new report records them
	FailOn   checks.Severity
	// ThreadIDs are the thread ids of every file of the run by path ("" for
	// none), when a manifest lists them; nil when unknown.
	ThreadIDs map[string]string
}

// Previous is the report of an earlier run, ready to answer which results
// hold. Safe for concurrent use.
type Previous struct {
	files map[string]*result.FileResult
	// sameNow: both runs judged liveness at one given --now, so a verdict
	// that read the clock holds.
	sameNow bool
	// hiddenMayFail: --fail-on is below the severity the previous run
	// showed, so a finding it hid may fail this run.
	hiddenMayFail bool
	// shared are the baseline identities (thread id, else path) of more
	// than one file; nil without a baseline.
	shared map[string]bool
	note   string
	reused atomic.Int64
}

// SettingsError is a previous report made with settings that change what
// the run reports: its results cannot be reused.
type SettingsError struct{ Diff string }

func (e *SettingsError) Error() string {
	return fmt.Sprintf("the previous report was made with other settings (%s): its results do not hold for this run", e.Diff)
}

// New indexes prev for run. Another command, or settings other than --now
// that differ, are errors; a report of another version of the tool (whose
// rules may judge otherwise) or one that cannot tell which files the
// previous baseline counts shared reuses nothing, and Note says why.
func New(prev *result.Report, run Run) (*Previous, error) {
	if prev.Command != "verify" {
		return nil, fmt.Errorf("the previous report is a report of %q, not of verify", prev.Command)
	}
	if run.Settings.Baseline == "written" {
		return nil, fmt.Errorf("--write-baseline records the fingerprint of every finding, which only reading every file gives")
	}
	p := &Previous{files: map[string]*result.FileResult{}}
	if prev.Version != run.Version || prev.Settings == nil {
		p.note = fmt.Sprintf("the previous report was made by rollout %s, this is %s: every file is read", prev.Version, run.Version)
		return p, nil
	}
	was, is := *prev.Settings, *run.Settings
	p.sameNow = was.Now != "" && was.Now == is.Now
	was.Now, is.Now = "", ""
	if d := was.Differ(&is); d != "" {
		return nil, &SettingsError{Diff: d}
	}
	if shown, err := checks.ParseSeverity(was.ShowSeverity); err != nil || run.FailOn < shown {
		p.hiddenMayFail = true
	}
	if is.Baseline != "" {
		if run.ThreadIDs == nil {
			p.note = "a baseline's counts are shared by the files of a thread, and without --manifest the threads of the files are not known before they are read: every file is read"
			return p, nil
		}
		p.shared = sharedIdentities(prev.Files, run.ThreadIDs)
	}
	for i := range prev.Files {
		p.files[prev.Files[i].Path] = &prev.Files[i]
	}
	return p, nil
}

// sharedIdentities are the baseline identities of more than one file in
// either run: a baseline that accepts n findings of one fingerprint
// suppresses the first n in path order, whichever of the files has them.
func sharedIdentities(prev []result.FileResult, now map[string]string) map[string]bool {
	shared := map[string]bool{}
	count := func(seen map[string]bool, threadID, path string) {
		id := "path:" + path
		if threadID != "" {
			id = "thread:" + threadID
		}
		if seen[id] {
			shared[id] = true
		}
		seen[id] = true
	}
	seen := map[string]bool{}
	for _, f := range prev {
		count(seen, f.ThreadID, f.Path)
	}
	seen = map[string]bool{}
	for path, id := range now {
		count(seen, id, path)
	}
	return shared
}

// Reuse is the previous result of the file at path when it holds for the
// file as stored now (size and version), else nil: the file is new, was
// not analysed (an error is always retried), changed, continues other
// rollouts (they may have changed), was judged against another clock, hid
// findings this run's --fail-on counts, or shares baseline counts with
// another file. The entry is shared, not copied: callers do not change it.
// A nil Previous (no --since) reuses nothing.
func (p *Previous) Reuse(path string, size int64, version string) *result.FileResult {
	if p == nil {
		return nil
	}
	e := p.files[path]
	if e == nil || e.Error != nil || e.Version == "" || e.Version != version || e.Size != size {
		return nil
	}
	for _, d := range e.DependsOn {
		if d != result.DependsClock || !p.sameNow {
			return nil
		}
	}
	if e.Hidden > 0 && p.hiddenMayFail {
		return nil
	}
	if p.shared != nil && (p.shared["thread:"+e.ThreadID] || e.ThreadID == "" && p.shared["path:"+e.Path]) {
		return nil
	}
	p.reused.Add(1)
	return e
}

// Reuser is Reuse as a function for policy.Analyse, nil without a
// previous report: a method value of a nil *Previous is not a nil func,
// and Analyse reads objects ahead only when nothing may be reused.
func (p *Previous) Reuser() func(path string, size int64, version string) *result.FileResult {
	if p == nil {
		return nil
	}
	return p.Reuse
}

// Note says why no result is reused, "" when some may be.
func (p *Previous) Note() string { return p.note }

// Summary says how many of files were reused and how many read.
func (p *Previous) Summary(files int) string {
	n := int(p.reused.Load())
	return fmt.Sprintf("%s unchanged (results reused), %s read", count(n), group(files-n))
}

func count(n int) string {
	if n == 1 {
		return "1 file"
	}
	return group(n) + " files"
}

// group writes n with thousands separated by commas.
func group(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
