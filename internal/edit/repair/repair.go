// Package repair is the repair transaction of one rollout: the analysis
// (checks), the fix plan, the byte-preserving rewrite into temporary files
// verified as it is written, and the atomic replacement of the file (or
// the write of another one) through the write guard (package inplace). It
// sits in the edit stage between cmd/rollout, which prints an Outcome and
// maps it to an exit code, and checks. It never prints.
//
// A repair is two calls: Begin analyses, plans and rewrites (nothing the
// user sees changes); Finish puts the result in place, or, for a dry run
// or a refused write, removes what Begin created. In between the caller
// can show the plan (the Outcome so far) and a diff (Txn.WriteDiff).
package repair

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/rollout"
)

// Options say what to repair and how.
type Options struct {
	Path   string // the rollout (a file: standard input cannot be replaced)
	Output string // write the result here instead of replacing Path ("": in place)
	// Write applies the plan; without it nothing is written (a dry run).
	Write    bool
	NoBackup bool // in place: do not keep Path.bak

	Fix       checks.FixSet // the fixes to apply (checks.SelectFixes); nil: the default set
	RandomIDs bool          // new ids from random bits (checks.FixOptions.RandomIDs)

	// The analysis settings, shared by the input's analysis and the
	// re-verification of the result: both must judge by the same rules.
	MaxLineBytes int64
	HandoffCap   int64
	// Now is when liveness is judged: an unanswered call of a file written
	// less than an hour before is left open (zero: unknown, left open).
	Now time.Time
	// Force repairs content whose first line is not a JSON object (a
	// damaged first line), which is otherwise refused as NotRollout, and
	// writes even when another process holds Path open for writing (an
	// agent between turns: what it writes next is lost).
	Force bool

	// Stage, when set (tests), is called at each step of a repair:
	// "analysed", then with Write "written", "backed-up", "checked",
	// "quarantined", "renamed".
	Stage func(string)
}

// Outcome is what a repair did, or would do in a dry run.
type Outcome struct {
	Path       string // the input
	Target     string // the file the result replaces or creates
	Quarantine string // where removed lines go (Target.quarantine.jsonl, see package artifacts)
	Backup     string // the copy of the original kept by an in-place write ("": none)
	// Late is what an agent appended to the input while it was replaced
	// (nil: nothing): those bytes are kept in Late.Kept.
	Late *inplace.Late
	// Compression of the result: an in-place repair keeps the input's
	// (zstd content is written back as zstd whatever the name); with
	// Output, the output's name decides (.zst or not).
	Compression rollout.Compression

	Input       *checks.Result  // the analysis of the input (its Findings: those the plan does not fix, Fixes.Planned names the others; its State: the scalars, without history, turns, world state or handoffs)
	Output      *checks.Result  // the re-verification of the result, its findings (State is nil; nil: nothing rewritten)
	Fixes       *checks.FixPlan // the plan, and the findings it leaves
	Changes     *Changes        // what the rewrite changed, in output order
	Skips       []rollout.Skip  // planned edits the rewrite could not apply
	Quarantined []Quarantined   // lines removed from the rollout
	LinesOut    int             // lines of the result

	// AlreadyQuarantined counts the removed lines whose entry the
	// quarantine already held (an earlier repair of the same input): they
	// are not added again.
	AlreadyQuarantined int

	// Salvage is the part of a zstd input cut short that the repair keeps
	// (nil: the input is whole).
	Salvage *Salvage

	// Links is the number of names (hard links) the input has; above 1,
	// the other names keep the old content after an in-place repair.
	Links uint64

	// Projection is what the repair does to Codex's history projection of
	// the thread (nil: none, or the changes lie after its cursor).
	Projection *inplace.ProjectionPlan
	// InHome: the rollout is in a Codex home, so its projection was looked
	// up (a nil Projection then means nothing of it goes stale).
	InHome bool

	Wrote   bool             // the result was put in place
	Refusal *inplace.Refusal // why the result was not written (nil: it was, or a dry run)
	// Warning is what the user must know about a write that happened
	// (the directory could not be synced, a writer appended to the old
	// file while it was replaced).
	Warning string
}

// NothingToFix reports whether the plan is empty (and the input whole).
func (o *Outcome) NothingToFix() bool { return o.Fixes.Plan.Empty() && o.Salvage == nil }

// Remaining is what verify would report on the result.
func (o *Outcome) Remaining() []checks.Finding {
	if o.Output != nil {
		return o.Output.Findings
	}
	return o.Input.Findings
}

// Change is one change of the rewrite. Values longer than KeepBytes are
// kept truncated (a quarantined line can be megabytes; the quarantine file
// has it whole): BeforeLen and AfterLen are the full lengths.
type Change struct {
	Rule          string
	Line          int   // input line
	OutLine       int   // output line holding the result (0: removed)
	Offset        int64 // input byte offset of the line
	Part          int   // object within the line
	Action        string
	Member        string // rollout.ActionSet and ActionEdit: the member changed ("payload.id")
	Before, After []byte
	HadBefore     bool // Before existed (a set member, not an added one)
	BeforeLen     int
	AfterLen      int
}

// KeepBytes is the most of a Change's values an Outcome keeps.
const KeepBytes = 512

// Quarantined is a line (or one object of a concatenated line) removed
// from the rollout to the quarantine file.
type Quarantined struct {
	Line   int
	Offset int64
	Reason string
	Bytes  int
}

// Txn is a repair between Begin and Finish.
type Txn struct {
	Outcome
	opts  Options
	seed  maphash.Seed // of the change-detection hashes of this repair
	src   snapshot     // the input as the analysis read it
	in    rollout.Compression
	out   *sinks          // the temporary files of a write
	lock  *inplace.Guard  // the input, locked for the whole write (nil: dry run)
	place artifacts.Place // where the artifacts of Target go
	store *outfile.Dir    // place.Dir, held open while writing (openStore)
	// backupLinked: Backup is a hard link of the input (not a copy).
	backupLinked bool
	linesIn      int    // lines of the input the rewrite read
	changed      int    // edits the rewrite applied
	tail         []byte // Salvage: the unreadable tail
	// savedProjection: the projection rows the write deleted (projection.go).
	savedProjection *home.SavedProjection
	// inputErrors counts the input's errors per rule, planned ones
	// included, once Input.Findings keeps only the unplanned (for guard).
	inputErrors map[string]int
}

// Begin analyses the input, plans its fixes and, when there are any,
// rewrites it into temporary files (with Write) while verifying the
// result. Nothing is visible to others until Finish, which must be called
// once whenever Begin returns no error. Errors are a *inplace.Refusal (nothing can
// be planned), a *rollout.PathError (the input cannot be read), a
// *reconstruct.ReadError (the input cannot be read to its end: a zstd
// stream cut short is one only when it is not salvaged, see Salvage) or a
// *reconstruct.InternalError.
func Begin(opts Options) (txn *Txn, err error) {
	t := &Txn{opts: opts, seed: maphash.MakeSeed()}
	t.Path = opts.Path
	if err := t.checkPaths(); err != nil {
		return nil, err
	}
	if opts.Write {
		if err := t.lockInput(); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				t.unlock()
			}
		}()
		if r := t.checkWriters(); r != nil {
			return nil, r
		}
		if opts.Output == "" {
			t.place.RemoveTemps() // a write killed before its rename left them
		}
	}
	// With Output, the input is copied to it while the analysis reads it
	// (as it is, or decompressed or compressed): when there is nothing to
	// fix, that copy is the result.
	var copyTo *outFile
	if opts.Write && opts.Output != "" {
		var err error
		if r := t.openStore(); r != nil {
			return nil, r
		}
		if copyTo, err = createOut(t.createResult(false), t.Compression != t.in, t.Compression, false); err != nil {
			t.tidy()
			return nil, &inplace.Refusal{Kind: inplace.WriteFailed, Path: t.Target, Err: err}
		}
	}
	err = t.analyse(copyTo)
	if err == nil {
		t.at("analysed")
		if t.NothingToFix() {
			if copyTo != nil {
				t.out = &sinks{out: copyTo}
			}
			return t, nil
		}
	}
	copyTo.abort()
	if err != nil {
		t.tidy()
		return nil, err
	}
	if err := t.rewrite(); err != nil {
		return nil, err
	}
	t.planProjection()
	if t.Refusal == nil {
		t.Refusal = t.guard()
	}
	if t.Refusal == nil {
		t.Refusal = t.allocationRefusal()
	}
	if t.Refusal != nil {
		t.discard()
	}
	return t, nil
}

// Finish completes the repair: with Write, the result is put in place
// (unless it was refused, or every planned edit was skipped in place);
// otherwise the temporary files are removed. It returns the Outcome.
func (t *Txn) Finish() *Outcome {
	defer t.unlock()
	switch {
	case t.Refusal != nil || !t.opts.Write || t.out == nil:
		t.discard()
	case !t.NothingToFix() && t.changed == 0 && t.Salvage == nil && t.opts.Output == "":
		// Every planned edit was skipped: the file stays as it is.
		t.discard()
	default:
		if r := t.commit(); r != nil {
			t.Refusal = r
		}
	}
	return &t.Outcome
}

func (t *Txn) at(stage string) {
	if t.opts.Stage != nil {
		t.opts.Stage(stage)
	}
}

func (t *Txn) checkOptions() checks.Options {
	return checks.Options{MaxLineBytes: t.opts.MaxLineBytes, HandoffCap: t.opts.HandoffCap, Now: t.opts.Now, Force: t.opts.Force,
		Lineage: lineageProblems}
}

// checkPaths refuses what repair must not touch before anything is read,
// and decides the compression of the result.
func (t *Txn) checkPaths() error {
	o := t.opts
	fi, err := os.Lstat(o.Path)
	if err != nil {
		return &rollout.PathError{Path: o.Path, Err: errors.Unwrap(err)}
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0 && o.Write && o.Output == "":
		return inplace.Refuse(inplace.Symlink, o.Path, "%s is a symbolic link: refusing to replace it", o.Path)
	case fi.IsDir():
		return inplace.Refuse(inplace.NotRollout, o.Path, "%s is a directory", o.Path)
	}
	if st, err := os.Stat(o.Path); err != nil || !st.Mode().IsRegular() {
		return inplace.Refuse(inplace.NotRollout, o.Path, "%s is not a regular file", o.Path)
	}
	if t.in, err = sniff(o.Path); err != nil {
		return err
	}
	t.Target, t.Compression = o.Path, t.in
	if o.Output != "" {
		t.Target, t.Compression = o.Output, rollout.Plain
		if rollout.IsCompressed(o.Output) {
			t.Compression = rollout.Zstd
		}
		if ofi, err := os.Lstat(o.Output); err == nil {
			switch {
			case ofi.Mode()&os.ModeSymlink != 0:
				return inplace.Refuse(inplace.Symlink, o.Output, "%s is a symbolic link: refusing to replace it", o.Output)
			case ofi.IsDir():
				return inplace.Refuse(inplace.BadOutput, o.Output, "-o %s is a directory", o.Output)
			case !ofi.Mode().IsRegular():
				// A device or FIFO is never renamed over (as root, -o
				// /dev/null would have replaced the device).
				return &inplace.Refusal{Kind: inplace.NotRegular, Path: o.Output, Err: outfile.CheckRegularOrAbsent(o.Output)}
			}
			if ifi, err := os.Stat(o.Path); err == nil && os.SameFile(ifi, ofi) {
				return inplace.Refuse(inplace.BadOutput, o.Output, "-o names the input file")
			}
		}
	}
	if t.place, err = artifacts.For(t.Target); err != nil {
		return &rollout.PathError{Path: t.Target, Err: err}
	}
	t.Quarantine = t.place.Quarantine()
	if o.Write {
		if err := t.place.Check(); err != nil {
			return inplace.StoreRefusal(t.place.Dir, err)
		}
		// Never read, follow or replace anything but a regular file there.
		others := []string{t.Quarantine}
		if o.Output == "" && !o.NoBackup {
			others = append(others, t.place.Backup(0), t.place.UndoRecord())
		}
		for _, p := range others {
			if err := outfile.CheckRegularOrAbsent(p); err != nil {
				return &inplace.Refusal{Kind: inplace.NotRegular, Path: p, Err: err}
			}
		}
	}
	return nil
}

// lockInput takes the exclusive advisory lock that keeps two repairs of
// one file apart for the whole transaction.
func (t *Txn) lockInput() error {
	g, err := inplace.Lock(t.Path)
	if err != nil {
		return err
	}
	t.lock = g
	return nil
}

func (t *Txn) unlock() {
	t.lock.Release()
	t.lock = nil
	t.closeStore()
}

// checkWriters refuses (InUse) when another process holds the input open
// for writing, unless Force: an agent idle between turns keeps its
// rollout open for append, and its next write would land in the replaced
// file.
func (t *Txn) checkWriters() *inplace.Refusal {
	if t.opts.Force || t.opts.Output != "" || t.lock == nil {
		return nil
	}
	return t.lock.CheckWriters()
}

// sniff reads the first bytes of path to tell how it is stored. A format
// repair cannot write back is refused.
func sniff(path string) (rollout.Compression, error) {
	f, err := os.Open(path)
	if err != nil {
		return rollout.Plain, &rollout.PathError{Path: path, Err: errors.Unwrap(err)}
	}
	defer f.Close()
	magic := make([]byte, rollout.MagicLen)
	n, err := io.ReadFull(f, magic)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return rollout.Plain, &rollout.PathError{Path: path, Err: err}
	}
	c, err := rollout.Sniff(path, magic[:n])
	return c, formatRefusal(path, err)
}

// formatRefusal turns the opener's refusal of an archive or compressed
// file into a Refusal; other errors pass through.
func formatRefusal(path string, err error) error {
	switch {
	case errors.Is(err, rollout.ErrCompressed):
		return &inplace.Refusal{Kind: inplace.Compressed, Path: path, Err: err}
	case errors.Is(err, rollout.ErrUnknownFormat):
		return &inplace.Refusal{Kind: inplace.NotRollout, Path: path, Err: err}
	}
	return err
}

// ErrOnlyTornRecord: the file's one line is a record cut short, so a
// repair would leave nothing (a NotRollout refusal wraps it).
var ErrOnlyTornRecord = errors.New("the file holds only a torn first record")

// guard refuses a repair that would leave more errors of some rule than
// the input had (a fix must never make a file worse), or an empty rollout
// from a file in which nothing is a record.
func (t *Txn) guard() *inplace.Refusal {
	if t.Output == nil {
		return nil
	}
	if t.LinesOut == 0 && t.linesIn == 1 && len(t.Quarantined) == 1 && t.Quarantined[0].Reason == "line/torn-tail" {
		// A write stopped inside the first record (a disk full while
		// Codex wrote session_meta): nothing of the thread is left.
		return inplace.Refuse(inplace.NotRollout, t.Path, "%s: %w (%d bytes without a newline): the thread cannot be recovered from it",
			t.Path, ErrOnlyTornRecord, t.Quarantined[0].Bytes)
	}
	if t.LinesOut == 0 && t.linesIn > 0 {
		return inplace.Refuse(inplace.NotRollout, t.Path, "%s: no line is a rollout record: repair would leave it empty", t.Path)
	}
	if t.LinesOut == 0 && t.Salvage != nil {
		return inplace.Refuse(inplace.NotRollout, t.Path, "%s: the zstd stream is cut short before its first whole line: there is nothing to salvage", t.Path)
	}
	before, after := t.inputErrors, errorsByRule(t.Output.Findings)
	if before == nil {
		before = errorsByRule(t.Input.Findings)
	}
	var worse []string
	for rule, n := range after {
		if n > before[rule] {
			worse = append(worse, fmt.Sprintf("%s (%d, was %d)", rule, n, before[rule]))
		}
	}
	if len(worse) == 0 {
		return nil
	}
	return inplace.Refuse(inplace.Worse, t.Path, "the repaired file would have more errors than the original: %s (a bug in repair: please report it)",
		strings.Join(worse, ", "))
}

func errorsByRule(fs []checks.Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		if f.Severity == checks.Error {
			m[f.Rule]++
		}
	}
	return m
}
