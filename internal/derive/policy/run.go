package policy

import (
	"context"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/base/pool"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// A Target is one file to verify, in report order (by path).
type Target struct {
	Path string
	// Order is the position in the input order, that of the messages on
	// stderr.
	Order int
	// Unusable is set for an entry a walk could not use: it is reported as
	// not analysed, never opened.
	Unusable error
	// Size and Version are the file as a manifest described it; with
	// Version "" the file is described (objstore.StatAny) before it is read.
	Size    int64
	Version string
}

// Targets lists a run's files in report order, by path: verifying them in
// that order lets each file go to the printers as soon as the ones before
// it are done. paths are the files to read in input order, unusable the
// entries a walk could not use (after them in input order); described has
// the size and version of the files a manifest described.
func Targets(paths []string, unusable []*rollout.WalkError, described map[string]objstore.Object) []Target {
	out := make([]Target, 0, len(paths)+len(unusable))
	for i, p := range paths {
		t := Target{Path: p, Order: i}
		if o, ok := described[p]; ok {
			t.Size, t.Version = o.Size, o.Version()
		}
		out = append(out, t)
	}
	for i, e := range unusable {
		out = append(out, Target{Path: e.Path, Order: len(paths) + i, Unusable: e})
	}
	slices.SortStableFunc(out, func(x, y Target) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// Reuse returns the result a previous run made of the file at path, when
// it holds for the file as stored now (size and version), else nil
// (incremental.Previous.Reuse). Safe for concurrent use.
type Reuse func(path string, size int64, version string) *result.FileResult

// Analyse verifies files on a pool of workers and hands each outcome to
// emit, on the calling goroutine, in input order: file i as soon as files
// 0..i-1 have been emitted, so the output does not depend on jobs.
// Workers run ahead of emit by at most aheadFiles files, and beyond jobs
// files only while the outcomes waiting hold fewer than aheadFindings
// findings: memory follows the largest files, not the run.
// With hash set, each result also carries the hashes of the records its
// findings are on (for baseline fingerprints). step is called as each
// file is read or its previous result reused (the command's progress).
// With reuse set, a file it has a result for is not read (verify --since).
func Analyse(targets []Target, jobs int, stdin io.Reader, opts checks.Options, hash bool, reuse Reuse, step func(), emit func(int, Input)) {
	if reuse == nil {
		// Objects are fetched ahead of the workers (with --since, most are
		// never read: each waits for its own GET).
		paths := make([]string, len(targets))
		for i, t := range targets {
			paths[i] = t.Path
		}
		defer objstore.ReadAhead(context.Background(), paths)()
	}
	pool.InOrder(len(targets), jobs, aheadFiles, findingsOf, aheadFindings, func(i int) Input {
		out := analyseTarget(targets[i], stdin, opts, hash, reuse)
		if targets[i].Unusable == nil {
			step() // progress counts the files read or reused
		}
		return out
	}, emit)
}

// How far the workers may run ahead of the file being emitted (Analyse).
const (
	aheadFiles    = 256
	aheadFindings = 1 << 16
)

func findingsOf(out Input) int {
	if out.Result == nil {
		return 0
	}
	return len(out.Result.Findings)
}

// analyseTarget verifies one file and keeps of the result what the report
// needs.
func analyseTarget(t Target, stdin io.Reader, opts checks.Options, hash bool, reuse Reuse) Input {
	if t.Unusable != nil {
		return Input{Path: t.Path, Err: t.Unusable}
	}
	size, version := stored(t)
	if reuse != nil && version != "" {
		if e := reuse(t.Path, size, version); e != nil {
			return Input{Path: t.Path, Reused: e}
		}
	}
	out := analyseOne(t.Path, stdin, opts)
	if hash && out.Err == nil {
		out.Hashes = HashRecords(t.Path, out.Result, opts.MaxLineBytes)
	}
	out.Result = slim(out.Result)
	out.Size, out.Version = size, version
	return out
}

// factsOf are the facts the report keeps of a replayed file: what the
// state says, with the compactions counted during the replay. Its size is
// FileResult.Size, taken before the read.
func factsOf(res *checks.Result, compactions int) result.FileFacts {
	st := res.State
	f := result.FileFacts{Compactions: compactions, RolloutID: st.ThreadID}
	if id, ok := rollout.RolloutIDFromName(res.Path); ok {
		f.RolloutID = id
	}
	f.LineageRoot = f.RolloutID
	if len(st.Segments) > 0 {
		f.LineageRoot = st.Segments[0].RolloutID
	}
	for _, t := range st.Turns {
		if t.Segment <= 0 {
			f.Turns++
		}
	}
	if st.Tokens != nil {
		f.Tokens = st.Tokens.TotalTokens
	}
	return f
}

// stored is the size and version of the file before it is read: a file
// that grows while it is read then looks changed to the next run, never
// the other way round. Pinned objects are described without a request.
func stored(t Target) (int64, string) {
	if t.Version != "" || t.Path == rollout.StdinPath {
		return t.Size, t.Version
	}
	o, err := objstore.StatAny(context.Background(), t.Path)
	if err != nil {
		return 0, "" // the read says why
	}
	return o.Size, o.Version()
}

// slim keeps of a result what the report needs (findings, a few summary
// fields) and lets the reconstructed state go: holding every file's state
// until the report was printed cost about 130 KB per file.
func slim(res *checks.Result) *checks.Result {
	if res == nil {
		return nil
	}
	st := res.State
	return &checks.Result{Path: res.Path, Records: res.Records, Findings: slices.Clip(res.Findings),
		State: &reconstruct.State{Era: st.Era, HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion, ThreadID: st.ThreadID,
			Clock: st.Clock, Continues: st.Continues}}
}

// analyseOne runs the checks on one file; a panic outside the engine's own
// recovery (opening the file, say) still becomes an internal error for that
// file instead of killing the other workers.
func analyseOne(path string, stdin io.Reader, opts checks.Options) (out Input) {
	defer func() {
		if v := recover(); v != nil {
			out = Input{Path: path, Err: &reconstruct.InternalError{Path: path, Value: v, Stack: debug.Stack()}}
		}
	}()
	compactions := 0
	countCompactions := func(o reconstruct.Observation) {
		if _, ok := o.Evidence.(reconstruct.FlowCompactionEvidence); ok && o.Pos.Segment <= 0 {
			compactions++
		}
	}
	res, err := checks.Run(path, stdin, opts, countCompactions)
	out = Input{Path: path, Result: res, Err: err}
	if res != nil {
		out.Facts = factsOf(res, compactions)
	}
	return out
}
