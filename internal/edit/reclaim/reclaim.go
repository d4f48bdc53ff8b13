// Package reclaim frees the disk space of rollouts under policies that each
// say what they give up, and proves before writing that resume rebuilds the
// same state from the new file. Every removed byte goes to an archive beside
// the file, so Undo restores the original bytes exactly.
//
// It sits beside repair in the flow: records -> space accounting (plan) ->
// byte splices (write) -> replay of old and new through the engine and the
// rule catalog (proof).
package reclaim

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Policies that reclaim applies.
var Policies = []string{space.PolicyCompress, space.PolicySupersededCheckpoints, space.PolicyDuplicateExecOutput, space.PolicyBeforeTurn}

// ArchiveSuffix names the archive of removed bytes after the plain name,
// in the file's place (package artifacts).
const ArchiveSuffix = artifacts.ArchiveSuffix

// Options configure planning and applying.
type Options struct {
	Policies     []string
	ColdAfter    time.Duration // compress: idle this long (mtime)
	Now          time.Time
	MaxLineBytes int64
	HandoffCap   int64
	// Force writes a file another process holds open for writing.
	Force bool
	// Stage, when set (tests), is called right before the file is replaced
	// or removed (inplace.StageSwitch).
	Stage func(string)
	// Planned and Proved, when set, are called as Run finishes planning a
	// file and proving it (the command's progress).
	Planned, Proved func(path string)
	// BeforeTurn is the N of before-turn: rollbacks are limited to the
	// last N user turns.
	BeforeTurn int
}

func (o Options) has(p string) bool {
	for _, q := range o.Policies {
		if q == p {
			return true
		}
	}
	return false
}

// Plan is what reclaim would do to one file.
type Plan struct {
	Path       string
	ThreadID   string
	Parent     string // parent thread of a sub-agent
	DiskBytes  int64
	Compressed bool        // the input is zstd
	Compress   bool        // the compress policy applies
	Cuts       []space.Cut // splices of the other policies
	// Frees estimates the bytes freed per policy.
	Frees map[string]int64
	// Skipped says why a requested policy does not apply. Run shares one
	// map between the plans that give the same reasons: read only.
	Skipped map[string]string
	// Blocked says why nothing is planned although something would apply.
	Blocked string
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return !p.Compress && len(p.Cuts) == 0 }

// OutPath is the path the result is written to.
func (p *Plan) OutPath() string {
	if p.Compress {
		return p.Path + ".zst"
	}
	return p.Path
}

// ArchivePath is where the removed bytes go: in the file's place (outside
// sessions/ and archived_sessions/ in a Codex home, else beside it).
func ArchivePath(path string) string {
	place, err := artifacts.For(path)
	if err != nil {
		return strings.TrimSuffix(path, ".zst") + ArchiveSuffix
	}
	return place.Archive()
}

// archives are the places an archive of path may be: its place, and
// beside the file where older versions left it in a Codex home.
func archives(path string) []string {
	place, err := artifacts.For(path)
	if err != nil || !place.InHome() {
		return []string{ArchivePath(path)}
	}
	return []string{place.Archive(), place.Beside().Archive()}
}

// ErrCompressedInput: splice policies need the plain file.
var ErrCompressedInput = errors.New("splice policies need a plain .jsonl (the original compressed bytes could not be restored exactly)")

// PlanFile reads one rollout and plans the requested policies.
func PlanFile(path string, o Options) (*Plan, *space.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	// A symlink would be replaced by a file, a FIFO would hang.
	if !fi.Mode().IsRegular() {
		if err := outfile.CheckRegularOrAbsent(path); err != nil {
			return nil, nil, err
		}
	}
	arcs := archives(path)
	for _, a := range arcs {
		if err := outfile.CheckRegularOrAbsent(a); err != nil {
			return nil, nil, err
		}
	}
	sf, userTurns, compressed, err := account(path, o)
	if err != nil {
		return nil, nil, err
	}
	sf.Path, sf.DiskBytes = path, fi.Size()
	p := &Plan{Path: path, ThreadID: sf.ThreadID, Parent: sf.ParentThreadID, DiskBytes: fi.Size(),
		Compressed: compressed, Frees: map[string]int64{}, Skipped: map[string]string{}}
	cuts := sf.Cuts
	if o.has(space.PolicyBeforeTurn) {
		line, more := sf.BeforeTurn(o.BeforeTurn, userTurns)
		if line == 0 {
			p.Skipped[space.PolicyBeforeTurn] = fmt.Sprintf("no compaction before the last %d user turns that no later rollback could undo (the file has %d; a smaller before-turn=N reaches further back)", o.BeforeTurn, len(userTurns))
		}
		cuts = append(append([]space.Cut(nil), cuts...), more...)
	}
	var kept []space.Cut
	for _, c := range cuts {
		if !o.has(c.Policy) {
			continue
		}
		if compressed {
			p.Skipped[c.Policy] = ErrCompressedInput.Error()
			continue
		}
		kept = append(kept, c)
	}
	// Policies may name the same bytes (an exec output member and its
	// string, a checkpoint both superseded and before the turn): each
	// range is cut once.
	p.Cuts = space.SortCuts(kept)
	for _, c := range p.Cuts {
		p.Frees[c.Policy] += int64(c.End-c.Start) - int64(len(c.Repl))
	}
	p.explainNothingFreed(sf, o)
	if o.has(space.PolicyCompress) {
		p.planCompress(fi, o)
	}
	if !p.Empty() {
		for _, a := range arcs {
			if _, err := os.Lstat(a); err == nil {
				p.Cuts, p.Compress = nil, false
				p.Blocked = fmt.Sprintf("already reclaimed: %s exists (rollout reclaim --undo %s first)", a, path)
				break
			}
		}
	}
	if len(p.Frees) == 0 {
		p.Frees = nil // a run over a home keeps a plan per file: most free nothing
	}
	return p, sf, nil
}

// account is the space account of the file, the plan's base. Before-turn
// needs the user turns resume keeps, so the account is then a record
// observer of the one replay loop; the other policies need only the
// records, and only those their cuts depend on walked. compressed: the
// file is stored as zstd.
func account(path string, o Options) (sf *space.File, userTurns []int, compressed bool, err error) {
	src, compressed, err := open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer src.Close()
	acct := space.New(space.Options{Plan: true, CutsOnly: !o.has(space.PolicyBeforeTurn)})
	if o.has(space.PolicyBeforeTurn) {
		ro := reconstruct.ReplayOptions{MaxLineBytes: o.MaxLineBytes, OnRecord: acct.Feed}
		ro.Path = path
		st, err := reconstruct.Replay(src, ro)
		if err != nil {
			return nil, nil, false, err
		}
		userTurns = st.UserTurnStarts()
	} else if err := space.Feed(src, path, o.MaxLineBytes, acct); err != nil {
		return nil, nil, false, err
	}
	sf, _ = acct.Finish()
	return sf, userTurns, compressed, nil
}

// open opens a rollout file as rollout.Open does and says whether it is
// stored as zstd, as rollout.Decode decided: the plan needs both, and a
// second open of each file to read its magic was 4% of a run over a home.
func open(path string) (io.ReadCloser, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, &rollout.PathError{Path: path, Err: errors.Unwrap(err)}
	}
	r, c, err := rollout.Decode(path, f)
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return decodedFile{r, f}, c == rollout.Zstd, nil
}

// decodedFile is a decoded rollout that closes its file too, and reads
// again by offset as the decoded stream does (rollout.Rereadable).
type decodedFile struct {
	io.ReadCloser
	f *os.File
}

func (d decodedFile) Close() error { return errors.Join(d.ReadCloser.Close(), d.f.Close()) }

func (d decodedFile) Rereader() io.ReaderAt { return rollout.RereaderOf(d.ReadCloser) }

// explainNothingFreed says why a splice policy asked for frees nothing.
func (p *Plan) explainNothingFreed(sf *space.File, o Options) {
	if o.has(space.PolicySupersededCheckpoints) && p.Frees[space.PolicySupersededCheckpoints] == 0 {
		switch {
		case sf.RollbackAfterCheckpoint:
			p.Skipped[space.PolicySupersededCheckpoints] = "a rollback follows the newest compaction"
		case !p.Compressed:
			p.Skipped[space.PolicySupersededCheckpoints] = notSuperseded(sf.Compactions)
		}
	}
	if o.has(space.PolicyDuplicateExecOutput) && p.Frees[space.PolicyDuplicateExecOutput] == 0 && !p.Compressed {
		p.Skipped[space.PolicyDuplicateExecOutput] = "no command output is stored twice (an item_completed output equal to its call's tool output)"
	}
}

// notSuperseded is why superseded-checkpoints frees nothing in a file of n
// compactions; the common answers are constants, not a string per file of
// a run over a whole home.
func notSuperseded(n int) string {
	const (
		none = "no compaction is superseded by a later one (0 compaction(s); two are needed)"
		one  = "no compaction is superseded by a later one (1 compaction(s); two are needed)"
	)
	switch n {
	case 0:
		return none
	case 1:
		return one
	}
	return fmt.Sprintf("no compaction is superseded by a later one (%d compaction(s); two are needed)", n)
}

// planCompress decides the compress policy. Codex's compression skips a
// rollout another continues and a rollout that continues another
// (reference_count > 0, history_base.is_some():
// codex-rs/rollout/src/compression.rs, #34566); so does reclaim's.
func (p *Plan) planCompress(fi os.FileInfo, o Options) {
	path := p.Path
	meta, _ := rollout.ReadMeta(path)
	refs := inplace.References(path)
	switch {
	case p.Compressed:
		p.Skipped[space.PolicyCompress] = "already compressed"
	case meta.Base != nil:
		p.Skipped[space.PolicyCompress] = fmt.Sprintf("a fork pointer: it continues rollout %s (history_base), and Codex's compression skips such files", meta.Base.RolloutID)
	case len(refs) > 0:
		p.Skipped[space.PolicyCompress] = fmt.Sprintf("referenced: %s continues it (history_base), and Codex's compression skips a referenced rollout", refs[0].Path)
	case o.Now.Sub(fi.ModTime()) < o.ColdAfter:
		p.Skipped[space.PolicyCompress] = fmt.Sprintf("not cold: modified %s ago, less than --cold-after %s (a smaller --cold-after counts it)",
			o.Now.Sub(fi.ModTime()).Round(time.Second), space.Age(o.ColdAfter))
	default:
		if _, err := os.Lstat(path + ".zst"); err == nil {
			p.Skipped[space.PolicyCompress] = path + ".zst already exists"
		} else {
			p.Compress = true
		}
	}
}

// Result is what applying a plan did, or would do.
type Result struct {
	Plan       *Plan
	BytesAfter int64 // on disk
	// ArchiveBytes is the size of the archive of removed bytes, which also
	// stays on disk until it is deleted.
	ArchiveBytes int64
	Identical    bool               // resume rebuilds the same state
	StateChanges []stateview.Change // how it differs ([] when identical)
	NewFindings  []checks.Finding   // findings of the new file the old one did not have
	Written      bool
	OutPath      string
	ArchivePath  string // "" when the plan is empty: no archive is made
	// Late is what an agent appended to the file while it was replaced or
	// removed (nil: nothing); those bytes are kept in Late.Kept.
	Late *inplace.Late
	// Projection is Codex's history projection of the thread that the cuts
	// invalidate (nil: none, or the cuts lie after its cursor): Commit
	// deletes it before it replaces the file, as Codex does, and keeps its
	// rows for Undo (FILE.reclaimed.projection.json).
	Projection *inplace.ProjectionPlan
}

// Refused reports whether the proof failed.
func (r *Result) Refused() bool { return !r.Identical || len(r.NewFindings) > 0 }

// Pending is a prepared reclaim: the new file and its archive are written
// to temporary files and proven; Commit puts them in place, Discard drops them.
type Pending struct {
	Result *Result
	dir    string // a private temporary directory of a dry run, removed by Discard
	out    *outfile.File
	arch   *outfile.File
	guard  *inplace.Guard // the lock repair also takes, held until Discard
	place  artifacts.Place
	store  *outfile.Dir // place.Dir, held open in place: artifacts are made relative to it
	read   int64        // bytes of the file read (and proven)
	opts   Options
}

// Prepare builds the new file and its archive, and replays old and new. With
// inPlace the temporary files sit beside the file, ready for Commit;
// otherwise they go to a private temporary directory (a dry run).
func Prepare(p *Plan, o Options, inPlace bool) (pend *Pending, err error) {
	if p.Empty() { // no archive: a run over a home keeps a result per file
		return &Pending{Result: &Result{Plan: p, OutPath: p.Path, Identical: true, BytesAfter: p.DiskBytes}, opts: o}, nil
	}
	res := &Result{Plan: p, OutPath: p.OutPath(), ArchivePath: ArchivePath(p.Path)}
	pd := &Pending{Result: res, opts: o}
	pend = pd // filled in below; what it holds is dropped on error
	defer func() {
		if err != nil {
			pd.Discard()
		}
	}()
	if pd.place, err = artifacts.For(p.Path); err != nil {
		return nil, err
	}
	if from, ok := firstCut(p); ok {
		// A rollout a fork or revert continues is immutable below its
		// cutoff: refused before anything is written, in a dry run too.
		if r := inplace.CheckReferences(p.Path, from); r != nil {
			return nil, r
		}
		var unreadable *inplace.Refusal
		if res.Projection, unreadable = inplace.StaleProjection(p.Path, from); unreadable != nil {
			return nil, unreadable
		}
	}
	if err := pd.create(p, o, inPlace); err != nil {
		return nil, err
	}
	trailer, err := pd.splice(p, o)
	if err != nil {
		return nil, err
	}
	if err := prove(res, p.Path, pend.out.TempName(), o, trailer.OriginalSHA256, trailer.ResultSHA256); err != nil {
		return nil, err
	}
	return pend, nil
}

// create takes the lock (inPlace) or a private temporary directory (a
// dry run), and creates the temporary files of the new file and the
// archive.
func (pd *Pending) create(p *Plan, o Options, inPlace bool) error {
	outPath, archPath := pd.Result.OutPath, pd.Result.ArchivePath
	var err error
	var tempIn *outfile.Dir
	if inPlace {
		// The same lock as repair's: two rewrites of one file never interleave.
		if pd.guard, err = inplace.Lock(p.Path); err != nil {
			return err
		}
		if !o.Force {
			if r := pd.guard.CheckWriters(); r != nil {
				return r
			}
		}
		if pd.store, err = pd.place.Open(true); err != nil {
			return inplace.StoreRefusal(pd.place.Dir, err)
		}
		pd.place.RemoveTemps() // a write killed before its rename left them
		tempIn = pd.place.TempIn(pd.store)
	} else {
		if pd.dir, err = os.MkdirTemp("", "rollout-reclaim-"); err != nil {
			return err
		}
		outPath = filepath.Join(pd.dir, filepath.Base(outPath))
		archPath = filepath.Join(pd.dir, filepath.Base(archPath))
	}
	fi, err := os.Stat(p.Path)
	if err != nil {
		return err
	}
	// The new file keeps the old one's mode, owner, group and xattrs; the
	// archive holds the user's data, so it is private like the quarantine.
	if pd.out, err = outfile.Create(outPath, outfile.Options{CopyFrom: fi, CopyXattrsFrom: p.Path, In: tempIn, RegularOnly: true}); err != nil {
		return err
	}
	archOpts := outfile.Options{Perm: 0o600, RegularOnly: true}
	if pd.store != nil {
		pd.arch, err = outfile.CreateIn(pd.store, filepath.Base(archPath), archOpts)
	} else {
		pd.arch, err = outfile.Create(archPath, archOpts)
	}
	return err
}

// splice writes the new file (the cuts spliced, compressed with the
// compress policy) and the archive of what the cuts removed, ending in its
// trailer, which it returns.
func (pd *Pending) splice(p *Plan, o Options) (archiveTrailer, error) {
	res := pd.Result
	out, arch := pd.out.OS(), pd.arch.OS()
	src, err := os.Open(p.Path)
	if err != nil {
		return archiveTrailer{}, err
	}
	defer src.Close()
	origHash := &countingHash{Hash: sha256.New()}
	newHash := sha256.New()
	var dst io.Writer = out
	var enc *zstd.Encoder
	if p.Compress {
		enc, _ = zstd.NewWriter(out, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		dst = enc
	}
	bw := bufio.NewWriterSize(io.MultiWriter(dst, newHash), 256<<10)
	aenc, _ := zstd.NewWriter(arch, zstd.WithEncoderConcurrency(1))
	aw := bufio.NewWriter(aenc)
	r := bufio.NewReaderSize(io.TeeReader(src, origHash), 256<<10)
	var pos, delta int64
	for _, c := range p.Cuts {
		at := c.LineOffset + int64(c.Start)
		if _, err := io.CopyN(bw, r, at-pos); err != nil {
			return archiveTrailer{}, fmt.Errorf("%s changed since it was planned: %w", p.Path, err)
		}
		before := make([]byte, c.End-c.Start)
		if _, err := io.ReadFull(r, before); err != nil {
			return archiveTrailer{}, fmt.Errorf("%s changed since it was planned: %w", p.Path, err)
		}
		bw.WriteString(c.Repl)
		aw.Write(archiveEntry(c, at, at-delta, before))
		pos = at + int64(len(before))
		delta += int64(len(before)) - int64(len(c.Repl))
	}
	if _, err := io.Copy(bw, r); err != nil {
		return archiveTrailer{}, err
	}
	if err := bw.Flush(); err != nil {
		return archiveTrailer{}, err
	}
	if enc != nil {
		if err := enc.Close(); err != nil {
			return archiveTrailer{}, err
		}
	}
	trailer := archiveTrailer{Reclaimed: archiveVersion, Path: filepath.Base(p.Path), Result: filepath.Base(res.OutPath),
		ThreadID: rollout.MetaThreadID(p.Path), OriginalSize: origHash.n,
		Policies: o.Policies, OriginalSHA256: hex.EncodeToString(origHash.Sum(nil)),
		ResultSHA256: hex.EncodeToString(newHash.Sum(nil)), ResultCompressed: p.Compress, Cuts: len(p.Cuts)}
	pd.read = origHash.n
	tb, _ := json.Marshal(trailer)
	aw.Write(append(tb, '\n'))
	if err := aw.Flush(); err != nil {
		return archiveTrailer{}, err
	}
	if err := aenc.Close(); err != nil {
		return archiveTrailer{}, err
	}
	if fi, err := out.Stat(); err == nil {
		res.BytesAfter = fi.Size()
	}
	if fi, err := arch.Stat(); err == nil {
		res.ArchiveBytes = fi.Size()
	}
	return trailer, nil
}

// Commit puts a prepared, proven reclaim in place: the archive first, so the
// file never changes without it, then, through the write guard
// (inplace.Guard.Replace), the new file by rename (compress: the .zst is
// renamed into place and the plain file removed).
func (pd *Pending) Commit() error {
	res := pd.Result
	if res.Plan.Empty() {
		return nil
	}
	if pd.dir != "" || res.Refused() {
		return errors.New("reclaim: only a proven, in-place preparation can be committed")
	}
	p := res.Plan
	if err := pd.arch.Commit(); err != nil {
		return err
	}
	// Codex's order: its projection of the thread first, then the file.
	var saved *home.SavedProjection
	if res.Projection != nil {
		var err error
		if saved, err = res.Projection.Delete(p.Path); err != nil {
			pd.removeArtifact(res.ArchivePath)
			return err
		}
		if saved != nil {
			if _, _, err := inplace.WriteProjectionRowsIn(pd.store, filepath.Base(pd.place.ReclaimProjection()), saved); err != nil {
				inplace.RestoreProjection(p.Path, saved)
				pd.removeArtifact(res.ArchivePath)
				return fmt.Errorf("keeping the projection rows for --undo: %w", err)
			}
		} else {
			pd.removeArtifact(pd.place.ReclaimProjection()) // no rows: none of an older reclaim may be restored
		}
	}
	committed := false
	from, ok := firstCut(p)
	if !ok {
		from = pd.read // compressing changes no byte of the content
	}
	late, err := pd.guard.Replace(inplace.Switch{Read: pd.read, From: from, Place: pd.place, Force: pd.opts.Force, At: pd.opts.Stage}, func() error {
		if err := pd.out.Commit(); err != nil {
			return err
		}
		committed = true
		if p.Compress {
			return os.Remove(p.Path)
		}
		return nil
	})
	if err != nil {
		if committed && p.Compress {
			os.Remove(res.OutPath) // the plain file stays: it is the rollout
		}
		if saved != nil && inplace.RestoreProjection(p.Path, saved) == nil {
			res.Projection.Deleted = false
			pd.removeArtifact(pd.place.ReclaimProjection())
		}
		pd.removeArtifact(res.ArchivePath)
		artifacts.TidyDir(pd.store)
		return err
	}
	res.Written, res.Late = true, late
	return outfile.SyncDir(filepath.Dir(p.Path))
}

// Discard removes what Prepare wrote and Commit did not take.
func (pd *Pending) Discard() {
	pd.out.Abort()
	pd.arch.Abort()
	pd.guard.Release()
	if pd.dir != "" {
		os.RemoveAll(pd.dir)
	} else if !pd.Result.Written && pd.store != nil {
		artifacts.TidyDir(pd.store)
	}
	pd.store.Close()
	pd.store = nil
}

// removeArtifact removes an artifact of the file in place: relative to
// the store directory held open (its name there), never by a path.
func (pd *Pending) removeArtifact(path string) {
	if pd.store != nil {
		pd.store.Remove(filepath.Base(path))
	}
}

// countingHash counts the bytes it hashes.
type countingHash struct {
	hash.Hash
	n int64
}

func (h *countingHash) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	return h.Hash.Write(p)
}

// archiveVersion is the version of the archive's last line: 1 had no
// thread id and sizes.
const archiveVersion = 2

type archiveTrailer struct {
	Reclaimed        int      `json:"reclaimed"` // archiveVersion
	Path             string   `json:"path"`      // base names, checked, never used: Undo derives both from FILE
	Result           string   `json:"result"`
	ThreadID         string   `json:"thread_id,omitempty"`
	OriginalSize     int64    `json:"original_size,omitempty"`
	Policies         []string `json:"policies"`
	OriginalSHA256   string   `json:"original_sha256"`
	ResultSHA256     string   `json:"result_sha256"` // of the result's content
	ResultCompressed bool     `json:"result_compressed"`
	Cuts             int      `json:"cuts"`
}

type archiveCut struct {
	Line         int    `json:"line"`
	Offset       int64  `json:"offset"`     // in the original
	NewOffset    int64  `json:"new_offset"` // in the result's content
	Path         string `json:"path"`
	Policy       string `json:"policy"`
	Before       string `json:"before,omitempty"`
	BeforeBase64 string `json:"before_base64,omitempty"`
	After        string `json:"after"`
}

func archiveEntry(c space.Cut, at, newAt int64, before []byte) []byte {
	e := archiveCut{Line: c.Line, Offset: at, NewOffset: newAt, Path: c.Path, Policy: c.Policy, After: c.Repl}
	if utf8.Valid(before) {
		e.Before = string(before)
	} else {
		e.BeforeBase64 = base64.StdEncoding.EncodeToString(before)
	}
	b, _ := json.Marshal(e)
	return append(b, '\n')
}

// prove replays the original and the result and compares what resume
// rebuilds, and the findings.
func prove(res *Result, orig, tmp string, o Options, origSHA, newSHA string) error {
	// Content hashes of every item, to compare (stateview.Prove), whether each
	// file can be read again or not.
	copts := checks.Options{MaxLineBytes: o.MaxLineBytes, HandoffCap: o.HandoffCap, HashItems: true}
	before, err := checks.Run(orig, nil, copts)
	if err != nil {
		return err
	}
	after, err := checks.Run(tmp, nil, copts)
	if err != nil {
		return err
	}
	if sum, err := contentSHA256(orig); err != nil || sum != origSHA {
		return fmt.Errorf("%s changed while it was being reclaimed", orig)
	}
	if sum, err := contentSHA256(tmp); err != nil || sum != newSHA {
		return fmt.Errorf("the reclaimed copy of %s does not read back as written", orig)
	}
	res.StateChanges = stateview.Prove(before.State, after.State)
	res.Identical = len(res.StateChanges) == 0
	had := map[string]bool{}
	for _, f := range before.Findings {
		had[f.Rule+"\x00"+fmt.Sprint(f.Line)] = true
	}
	for _, f := range after.Findings {
		if !had[f.Rule+"\x00"+fmt.Sprint(f.Line)] {
			res.NewFindings = append(res.NewFindings, f)
		}
	}
	return nil
}

// contentSHA256 hashes a rollout's content (decompressed when zstd).
func contentSHA256(path string) (string, error) {
	f, err := rollout.Open(path, nil)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// firstCut is the content offset of the first byte the plan's cuts change
// (compressing changes none of the content Codex reads).
func firstCut(p *Plan) (int64, bool) {
	first, ok := int64(0), false
	for _, c := range p.Cuts {
		if off := c.LineOffset + int64(c.Start); !ok || off < first {
			first, ok = off, true
		}
	}
	return first, ok
}
