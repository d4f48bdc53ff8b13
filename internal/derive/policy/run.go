package policy

import (
	"io"
	"runtime/debug"
	"slices"

	"github.com/rollout-dev/rollout/checks"
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
}

// Analyse verifies files on a pool of workers and hands each outcome to
// emit, on the calling goroutine, in input order: file i as soon as files
// 0..i-1 have been emitted, so the output does not depend on jobs.
// Workers run ahead of emit by at most aheadFiles files, and beyond jobs
// files only while the outcomes waiting hold fewer than aheadFindings
// findings: memory follows the largest files, not the run.
// With hash set, each result also carries the hashes of the records its
// findings are on (for baseline fingerprints). step is called as each
// file is read (the command's progress).
func Analyse(targets []Target, jobs int, stdin io.Reader, opts checks.Options, hash bool, step func(), emit func(int, Input)) {
	pool.InOrder(len(targets), jobs, aheadFiles, findingsOf, aheadFindings, func(i int) Input {
		out := analyseTarget(targets[i], stdin, opts, hash)
		if targets[i].Unusable == nil {
			step() // progress counts the files read
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
func analyseTarget(t Target, stdin io.Reader, opts checks.Options, hash bool) Input {
	if t.Unusable != nil {
		return Input{Path: t.Path, Err: t.Unusable}
	}
	out := analyseOne(t.Path, stdin, opts)
	if hash && out.Err == nil {
		out.Hashes = HashRecords(t.Path, out.Result, opts.MaxLineBytes)
	}
	out.Result = slim(out.Result)
	return out
}

// factsOf are the facts the report keeps of a replayed file: what the
// state says, with the bytes and compactions counted during the replay.
func factsOf(res *checks.Result, bytes int64, compactions int) result.FileFacts {
	st := res.State
	f := result.FileFacts{Bytes: bytes, Compactions: compactions, RolloutID: st.ThreadID}
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

// slim keeps of a result what the report needs (findings, a few summary
// fields) and lets the reconstructed state go: holding every file's state
// until the report was printed cost about 130 KB per file.
func slim(res *checks.Result) *checks.Result {
	if res == nil {
		return nil
	}
	st := res.State
	return &checks.Result{Path: res.Path, Records: res.Records, Findings: slices.Clip(res.Findings),
		State: &reconstruct.State{Era: st.Era, HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion, ThreadID: st.ThreadID}}
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
	var bytes int64
	onRead := opts.OnRead
	opts.OnRead = func(n int) {
		bytes += int64(n)
		if onRead != nil {
			onRead(n)
		}
	}
	compactions := 0
	countCompactions := func(o reconstruct.Observation) {
		if _, ok := o.Evidence.(reconstruct.FlowCompactionEvidence); ok && o.Pos.Segment <= 0 {
			compactions++
		}
	}
	res, err := checks.Run(path, stdin, opts, countCompactions)
	out = Input{Path: path, Result: res, Err: err}
	if res != nil {
		out.Facts = factsOf(res, bytes, compactions)
	}
	return out
}
