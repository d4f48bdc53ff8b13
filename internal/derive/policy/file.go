package policy

import (
	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// Input is one file as the analysis left it.
type Input struct {
	// Path names the file as the run found it; the entry takes the
	// result's own path when there is a result.
	Path string
	// Result is nil when the file could not be analysed at all.
	Result *checks.Result
	// Err says why the file could not be analysed, or not to its end.
	Err error
	// Named is set for a file the user named, unset for one a directory
	// walk found: a named file that cannot be read is unusable input.
	Named bool
	// Facts are what the replay measured of the file besides its findings.
	Facts result.FileFacts
	// Hashes are the hashes of the records the findings are on, by line,
	// when the pipeline NeedsHashes (HashRecords).
	Hashes map[int]string
}

// file is one file going through the steps.
type file struct {
	Input
	// entry is the file's report entry being shaped; its findings are the
	// result's, filtered in place: a copy would double what a file with
	// many findings holds.
	entry result.FileResult
	// fingerprints are those of entry.Findings, index for index, from the
	// fingerprinter to the baseline steps; nil when no baseline is used.
	fingerprints []string
	status       Status
	// suppressed and hidden count the findings the steps left out.
	suppressed, hidden int
}

func newFile(in Input) *file {
	f := &file{Input: in, entry: result.FileResult{Path: in.Path}}
	if res := in.Result; res != nil {
		st := res.State
		f.entry = result.FileResult{Path: res.Path, Records: res.Records, Era: string(st.Era),
			HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion, ThreadID: st.ThreadID, FileFacts: in.Facts, Findings: res.Findings}
	}
	if in.Err != nil {
		f.entry.Error = result.NewFileError(in.Path, in.Err)
	}
	return f
}

// keep drops, in place, the findings for which keep(i) is false, with
// their fingerprints, and returns how many it dropped.
func (f *file) keep(keep func(i int) bool) int {
	n := 0
	for i := range f.entry.Findings {
		if !keep(i) {
			continue
		}
		f.entry.Findings[n] = f.entry.Findings[i]
		if f.fingerprints != nil {
			f.fingerprints[n] = f.fingerprints[i]
		}
		n++
	}
	dropped := len(f.entry.Findings) - n
	clear(f.entry.Findings[n:])
	f.entry.Findings = f.entry.Findings[:n]
	if f.fingerprints != nil {
		f.fingerprints = f.fingerprints[:n]
	}
	return dropped
}
