package repair

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// The file side of repair: reading the input with a change-detection hash,
// writing the result through a temporary file, the backup, the quarantine
// and the final check before the atomic rename. Every failure path removes
// what it created; the original is replaced only by the rename.

// snapshot is what the analysis saw of the input: enough to notice any change.
type snapshot struct {
	fi   os.FileInfo // from the open file: inode, size, mtime
	size int64       // bytes read
	hash uint64      // maphash of every byte read (this repair's seed)
}

// hashingReader hashes and counts what passes through it (and copies it
// to tee and walk, when set).
type hashingReader struct {
	r    io.Reader
	at   io.ReaderAt
	h    maphash.Hash
	n    int64
	tee  *outFile
	walk *rollout.ZstdCut
}

func newHashingReader(r io.Reader, seed maphash.Seed) *hashingReader {
	hr := &hashingReader{r: r, at: rollout.RereaderOf(r)}
	hr.h.SetSeed(seed)
	return hr
}

// Rereader lets the line reader read a long line again by offset (into a
// buffer of its size) without hashing or copying it twice: the reader
// checks that the bytes it reads again are those that passed here.
func (hr *hashingReader) Rereader() io.ReaderAt { return hr.at }

func (hr *hashingReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.n += int64(n)
	if hr.tee != nil && n > 0 {
		hr.tee.Write(p[:n]) // its error is reported by finish
	}
	if hr.walk != nil {
		hr.walk.Write(p[:n])
	}
	return n, err
}

// input is the input open for one pass.
type input struct {
	f   *os.File
	raw *hashingReader // the bytes as stored, hashed
	src io.ReadCloser  // the rollout they hold, decoded
	cut *cutReader     // src, when the repair salvages a stream cut short (else nil)
}

func (in *input) Close() {
	in.src.Close()
	in.f.Close()
}

// openInput opens the input for one pass: the raw bytes, hashed, and the
// rollout they hold, decoded by the same opener verify uses. A change of
// format since checkPaths looked is a change of the file. tee and walk,
// when set, receive a copy of the raw bytes.
func (t *Txn) openInput(tee *outFile, walk *rollout.ZstdCut) (*input, error) {
	f, err := os.Open(t.Path)
	if err != nil {
		return nil, &rollout.PathError{Path: t.Path, Err: errors.Unwrap(err)}
	}
	raw := newHashingReader(f, t.seed)
	raw.tee, raw.walk = tee, walk
	src, c, err := rollout.DecodeWith(t.Path, raw, rollout.OpenOptions{Force: t.opts.Force})
	if err == nil && c != t.in {
		src.Close()
		err = &inplace.Refusal{Kind: inplace.Changed, Path: t.Path, Err: fmt.Errorf("%w: %s is no longer stored as it was", inplace.ErrFileChanged, t.Path)}
	}
	if err != nil {
		f.Close()
		return nil, formatRefusal(t.Path, err)
	}
	in := &input{f: f, raw: raw, src: src}
	if t.salvages() {
		in.cut = &cutReader{ReadCloser: src}
		in.src = in.cut
	}
	return in, nil
}

// analyse is pass 1: the analysis of the input, its snapshot and the fix
// plan. copyTo, when set, receives a copy of the input (re-encoded when
// the compression of the result differs from the input's).
func (t *Txn) analyse(copyTo *outFile) error {
	// The same compression: the bytes are copied as they are read.
	sameBytes := copyTo != nil && t.Compression == t.in
	var tee *outFile
	if sameBytes {
		tee = copyTo
	}
	var walk *rollout.ZstdCut
	if t.salvages() {
		walk = &rollout.ZstdCut{}
	}
	in, err := t.openInput(tee, walk)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.f.Stat()
	if err != nil {
		return &rollout.PathError{Path: t.Path, Err: err}
	}
	var src io.Reader = in.src
	if copyTo != nil && !sameBytes {
		src = io.TeeReader(in.src, copyTo)
	}
	var facts checks.FixFacts
	// The plan is made on what the repaired file holds: a glued line's
	// records, which Codex skips, come back once the torn bytes are cut.
	copts := t.checkOptions()
	copts.ReplayGlued = true
	// The findings are made on demand: those the plan fixes are never
	// kept (a million planned fixes would keep a million findings), only
	// planned; the result's own are judged after the rewrite.
	an, err := checks.RunReaderAnalysis(t.Path, src, copts, facts.Observe)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, in.raw); err != nil {
		return &rollout.PathError{Path: t.Path, Err: err}
	}
	t.src = snapshot{fi: fi, size: in.raw.n, hash: in.raw.h.Sum64()}
	t.Links = inplace.Links(fi)
	t.Fixes, err = checks.PlanAnalysis(an, &facts, checks.FixOptions{Fix: t.opts.Fix, RandomIDs: t.opts.RandomIDs})
	if err != nil {
		return err
	}
	empty := t.Fixes.Plan.Empty()
	if !empty {
		// The guard compares the result with every error of the input.
		t.inputErrors = map[string]int{}
		for i := range an.Len() {
			if f := an.At(i); f.Severity == checks.Error {
				t.inputErrors[f.Rule]++
			}
		}
	}
	t.Input = &checks.Result{Path: an.Path, Records: an.Records, State: an.State,
		Findings: an.Findings(func(i int) bool { return empty || !t.Fixes.IsPlanned(i) })}
	if in.cut != nil && in.cut.cut {
		err = t.planSalvage(in, walk)
	}
	if err == nil {
		t.Input.State = summary(t.Input.State)
	}
	return err
}

// summary is what the rest of a repair reads of the input's state once
// the plan is made: its scalars. Its history, turns, world state and
// handoffs (a record per item) are not kept through the rewrite, beside
// the state the re-verification builds of the result.
func summary(st *reconstruct.State) *reconstruct.State {
	s := *st
	s.History = reconstruct.NewHistory()
	s.Turns, s.WorldState, s.Handoffs, s.Tokens, s.Settings, s.DynamicTools = nil, nil, nil, nil, nil, nil
	return &s
}

// outFile is an output being written, through outfile (a temporary file
// next to the file it will replace, renamed over it by Commit). Writes are
// queued to a goroutine that compresses (zstd) and writes them, and starts
// the disk writeback as it goes: the rewrite and the verification go on
// while the disk works, and the fsync before the rename is short.
type outFile struct {
	of   *outfile.File
	path string // the temporary file
	f    *os.File
	ch   chan []byte
	done chan error
	pool sync.Pool
	err  error // the goroutine's error, once finished
}

// createOut creates a temporary file with create (given the options
// every output of a repair shares). encode: the bytes written are a
// rollout to store with compression c (else they are stored as they
// come). writeback: start writing to disk early (off for a copy that may
// be thrown away).
func createOut(create func(outfile.Options) (*outfile.File, error), encode bool, c rollout.Compression, writeback bool) (*outFile, error) {
	of, err := create(outfile.Options{Perm: 0o600})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", inplace.ErrWriteFailed, err)
	}
	f := of.OS()
	o := &outFile{of: of, path: of.TempName(), f: f, ch: make(chan []byte, 32), done: make(chan error, 1)}
	wb := &writebackFile{f: f, on: writeback}
	bw := bufio.NewWriterSize(wb, 1<<20)
	var w io.Writer = bw
	var zw *zstd.Encoder
	if encode && c == rollout.Zstd {
		if zw, err = zstd.NewWriter(bw, zstd.WithEncoderConcurrency(1)); err != nil {
			of.Abort()
			return nil, fmt.Errorf("%w: %v", inplace.ErrWriteFailed, err)
		}
		w = zw
	}
	go func(ch <-chan []byte) {
		var err error
		for b := range ch {
			if err == nil {
				_, err = w.Write(b)
			}
			o.pool.Put(&b)
		}
		if zw != nil && err == nil {
			err = zw.Close()
		}
		if err == nil {
			err = bw.Flush()
		}
		o.done <- err
	}(o.ch)
	return o, nil
}

// writePiece bounds the copies Write queues: a long line (tens of MB) is
// queued in pieces, not copied whole, and the pool never keeps its size.
const writePiece = 256 << 10

// Write queues a copy of p; write errors are reported by finish.
func (o *outFile) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		piece := rest[:min(len(rest), writePiece)]
		rest = rest[len(piece):]
		var b []byte
		if v, ok := o.pool.Get().(*[]byte); ok {
			b = (*v)[:0]
		}
		o.ch <- append(b, piece...)
	}
	return len(p), nil
}

// wait stops the writer goroutine and returns its error.
func (o *outFile) wait() error {
	if o.ch != nil {
		close(o.ch)
		o.ch = nil
		if err := <-o.done; err != nil {
			o.err = fmt.Errorf("%w: %s: %v", inplace.ErrWriteFailed, o.path, err)
		}
	}
	return o.err
}

// finish completes the file short of the rename: everything written,
// metadata set (mode, and owner, group and xattrs where asked), fsynced.
func (o *outFile) finish(meta func(*os.File) error) error {
	err := o.wait()
	if err == nil {
		err = meta(o.f)
	}
	if err == nil {
		err = o.of.Prepare()
	}
	if err != nil && !errors.Is(err, inplace.ErrWriteFailed) {
		err = fmt.Errorf("%w: %s: %v", inplace.ErrWriteFailed, o.path, err)
	}
	return err
}

// commit renames the finished file over its target. notDurable: it is in
// place, but syncing the directory failed.
func (o *outFile) commit() (notDurable, err error) {
	err = o.of.Commit()
	if errors.Is(err, outfile.ErrNotDurable) {
		return err, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", inplace.ErrWriteFailed, err)
	}
	return nil, nil
}

func (o *outFile) abort() {
	if o == nil {
		return
	}
	o.wait()
	o.of.Abort()
}

// writebackFile starts writing a file to disk every few megabytes.
type writebackFile struct {
	f           *os.File
	on          bool
	off, synced int64
}

func (w *writebackFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.on && w.off-w.synced >= 8<<20 {
		startWriteback(w.f, w.synced, w.off-w.synced)
		w.synced = w.off
	}
	return n, err
}

// quarantineFile stages the quarantine file: the existing entries, then
// this repair's, in a temporary file renamed into place with the result.
//
// An entry already in the file is not added again: a repair killed
// between the two renames left its entries in the quarantine and the
// input as it was, and the next repair removes the same lines.
type quarantineFile struct {
	target string
	store  *outfile.Dir // the directory of target, held open
	out    *outFile
	meta   func(*os.File) error // the metadata the file keeps or takes
	owner  os.FileInfo          // whose a new quarantine file is
	seen   map[uint64]bool      // hashes of the entries already there
	dupes  int                  // entries not added: already there
	seed   maphash.Seed
	buf    []byte
}

func (q *quarantineFile) add(e rollout.QuarantineEntry) error {
	q.buf = e.AppendJSON(q.buf[:0])
	return q.addLine(q.buf)
}

// addLine adds one entry, a JSON line with its "\n".
func (q *quarantineFile) addLine(line []byte) error {
	if q.out == nil {
		if err := q.start(); err != nil {
			return err
		}
	}
	if q.seen[maphash.Bytes(q.seed, line)] {
		q.dupes++
		return nil
	}
	_, err := q.out.Write(line)
	return err
}

// start creates the temporary file with the existing entries. The
// existing file is opened without following a symlink and must be
// regular: a symlink to /dev/zero or a FIFO there is refused.
func (q *quarantineFile) start() error {
	name := filepath.Base(q.target)
	out, err := createOut(func(o outfile.Options) (*outfile.File, error) { return outfile.CreateIn(q.store, name, o) }, false, rollout.Plain, false)
	if err != nil {
		return err
	}
	q.out, q.seen, q.seed = out, map[uint64]bool{}, maphash.MakeSeed()
	q.meta = func(f *os.File) error {
		if err := f.Chmod(0o600); err != nil {
			return err
		}
		if q.owner != nil {
			f.Chown(inplace.Owner(q.owner)) // best effort: root repairing a user's file
		}
		return nil
	}
	old, err := q.store.OpenExisting(name)
	if err != nil {
		return fmt.Errorf("%w: %v", inplace.ErrWriteFailed, err) // exit 4, like any refused write
	}
	if old == nil {
		return nil
	}
	defer old.Close()
	if fi, err := old.Stat(); err == nil {
		q.meta = func(f *os.File) error { return outfile.CopyMetadata(f, fi, "") }
	}
	br := bufio.NewReaderSize(old, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			q.seen[maphash.Bytes(q.seed, line)] = true
			q.out.Write(line)
			line = line[:0]
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: reading %s: %v", inplace.ErrWriteFailed, q.target, err)
		}
	}
}

// sinks are the temporary files of a write, removed unless committed.
type sinks struct {
	out *outFile
	q   quarantineFile
}

func (s *sinks) abort() {
	if s == nil {
		return
	}
	s.out.abort()
	s.q.out.abort()
}

// rewrite is pass 2: the input streamed through the rewriter into the
// temporary file (with Write) and, at the same time, into the verifier.
func (t *Txn) rewrite() error {
	var sink io.Writer = io.Discard
	if t.opts.Write {
		if r := t.openStore(); r != nil {
			return r
		}
		out, err := createOut(t.createResult(t.opts.Output == ""), true, t.Compression, true)
		if err != nil {
			t.tidy()
			return &inplace.Refusal{Kind: inplace.WriteFailed, Path: t.Target, Err: err}
		}
		q := quarantineFile{target: t.Quarantine, store: t.store}
		if t.opts.Output == "" {
			q.owner = t.src.fi
		}
		t.out = &sinks{out: out, q: q}
		sink = out
	}
	in, err := t.openInput(nil, nil)
	if err != nil {
		t.discard()
		return err
	}
	defer in.Close()
	raw := in.raw

	// The verifier reads the output as it is written: on two cores the
	// re-verification costs little more than the rewrite itself. A long
	// line reaches it whole, not copied.
	pipe := rollout.NewLinePipe()
	verified := make(chan error, 1)
	go func() {
		res, err := checks.RunReader(t.Path, pipe, t.checkOptions())
		pipe.Drain() // never leave the writer blocked
		if res != nil {
			res.State = nil // judged: only its findings are kept
		}
		t.Output = res
		verified <- err
	}()
	out := &outputs{sink: sink, bw: bufio.NewWriterSize(pipe, 256<<10), pipe: pipe}
	stats, err := rollout.Rewrite(out, in.src, &t.Fixes.Plan, t.rewriteOptions())
	if err == nil {
		err = out.bw.Flush()
	}
	pipe.CloseWithError(err)
	verr := <-verified
	if err == nil {
		_, err = io.Copy(io.Discard, raw) // what the decoder left unread
	}
	if err == nil && t.Salvage != nil && t.out != nil {
		err = t.quarantineTail()
	}
	if stats != nil {
		t.LinesOut, t.linesIn, t.changed = stats.LinesOut, stats.LinesIn, stats.Changes
	}
	switch {
	case errors.Is(err, inplace.ErrWriteFailed):
		t.Refusal = &inplace.Refusal{Kind: inplace.WriteFailed, Path: t.Target, Err: err}
	case errors.Is(err, rollout.ErrSourceChanged):
		t.Refusal = &inplace.Refusal{Kind: inplace.Changed, Path: t.Path, Err: fmt.Errorf("%w: %v", inplace.ErrFileChanged, err)}
	case err != nil:
		t.discard()
		return err
	case raw.n != t.src.size || raw.h.Sum64() != t.src.hash,
		t.Salvage != nil && (in.cut == nil || !in.cut.cut || in.cut.n != t.Salvage.Decoded):
		t.Refusal = inplace.Refuse(inplace.Changed, t.Path, "%w: %s was modified between the analysis and the rewrite", inplace.ErrFileChanged, t.Path)
	case verr != nil:
		t.discard()
		return verr
	}
	return nil
}

// outputs is where the rewrite goes: the result (sink) and the verifier,
// which takes long lines whole.
type outputs struct {
	sink io.Writer
	bw   *bufio.Writer // over pipe
	pipe *rollout.LinePipe
}

func (o *outputs) Write(p []byte) (int, error) {
	if n, err := o.sink.Write(p); err != nil {
		return n, err
	}
	return o.bw.Write(p)
}

func (o *outputs) WriteLine(body []byte, eol string) error {
	if _, err := o.sink.Write(body); err != nil {
		return err
	}
	if _, err := io.WriteString(o.sink, eol); err != nil {
		return err
	}
	if err := o.bw.Flush(); err != nil {
		return err
	}
	return o.pipe.WriteLine(body, eol)
}

func (t *Txn) rewriteOptions() rollout.RewriteOptions {
	// Most plans change each planned edit once, and a renumbering each line
	// from where it starts: sized once, a million changes are not grown
	// step by step (each step keeps the old array until it is copied).
	n := t.Fixes.Plan.Len()
	if seq := t.Fixes.Plan.Sequence; seq != nil && t.Input.Records >= seq.From {
		n += t.Input.Records - seq.From + 1
	}
	if t.Changes == nil {
		t.Changes = &Changes{}
	}
	t.Changes.Grow(n)
	return rollout.RewriteOptions{
		MaxLineBytes: t.opts.MaxLineBytes,
		Reopen:       t.reopen,
		OnChange:     t.onChange,
		OnSkip:       func(s rollout.Skip) { t.Skips = append(t.Skips, s) },
		OnQuarantine: t.onQuarantine,
	}
}

// reopen opens the input again, decoded (for a line moved to the front).
func (t *Txn) reopen() (io.ReadCloser, error) {
	r, err := rollout.Open(t.Path, nil)
	if err != nil || !t.salvages() {
		return r, err
	}
	return &cutReader{ReadCloser: r}, nil
}

// quarantineTail adds the unreadable tail of a salvage to the quarantine,
// after the lines the rewrite removed.
func (t *Txn) quarantineTail() error {
	before := t.out.q.dupes
	if err := t.out.q.addLine(t.salvageEntry()); err != nil {
		return err
	}
	t.Salvage.Duplicate = t.out.q.dupes > before
	return nil
}

func (t *Txn) onChange(c rollout.Change) {
	t.Changes.Add(Change{Rule: c.Label, Line: c.Line, OutLine: c.OutLine, Offset: c.Offset, Part: c.Part,
		Action: c.Action, Member: c.Path, Before: c.Before, After: c.After, HadBefore: c.Before != nil,
		BeforeLen: len(c.Before), AfterLen: len(c.After)})
}

func (t *Txn) onQuarantine(e rollout.QuarantineEntry) error {
	t.Quarantined = append(t.Quarantined, Quarantined{Line: e.Line, Offset: e.Offset, Reason: e.Reason, Bytes: len(e.Raw)})
	if t.out == nil {
		return nil
	}
	before := t.out.q.dupes
	err := t.out.q.add(e)
	t.AlreadyQuarantined += t.out.q.dupes - before
	return err
}

// discard removes the temporary files of a write that will not happen.
func (t *Txn) discard() {
	if t.out != nil {
		t.out.abort()
		t.out = nil
		t.tidy()
	}
}

// openStore opens the directory of the artifacts (creating it), checked
// as artifacts.Place.Open says: every artifact of the write is made,
// renamed and removed relative to it, never by a path another user could
// redirect between a check and the use.
func (t *Txn) openStore() *inplace.Refusal {
	if t.store != nil {
		return nil
	}
	d, err := t.place.Open(true)
	if err != nil {
		return inplace.StoreRefusal(t.place.Dir, err)
	}
	t.store = d
	return nil
}

// tidy removes the store directories the write made and left empty.
func (t *Txn) tidy() {
	if t.store != nil {
		artifacts.TidyDir(t.store)
	}
}

// closeStore lets the store go, once the write is over.
func (t *Txn) closeStore() {
	t.store.Close()
	t.store = nil
}

// createResult makes the temporary file of the result: in the store when
// it is on the target's file system (so the target's own directory gets
// nothing but the rename), else beside the target.
func (t *Txn) createResult(regularOnly bool) func(outfile.Options) (*outfile.File, error) {
	return func(o outfile.Options) (*outfile.File, error) {
		o.RegularOnly, o.In = regularOnly, t.place.TempIn(t.store)
		return outfile.Create(t.Target, o)
	}
}

// base is the name of an artifact in the store.
func base(path string) string { return filepath.Base(path) }

// commit puts the result in place: temporary files completed and fsynced,
// the backup made, the input checked unchanged, then the renames and the
// directory fsync. On any failure nothing the repair created survives and
// the input is untouched.
func (t *Txn) commit() (ref *inplace.Refusal) {
	s := t.out
	inPlace := t.opts.Output == ""
	var qBefore *quarantineState // what the quarantine held, once it is replaced
	defer func() {
		if ref != nil {
			s.abort()
			if qBefore != nil {
				qBefore.restore(t.store, base(t.Quarantine))
			}
			if t.Backup != "" {
				t.store.Remove(base(t.Backup))
				t.Backup = ""
			}
			t.tidy()
		}
	}()
	failed := t.failed
	if err := s.out.finish(t.resultMeta()); err != nil {
		return failed(err)
	}
	if s.q.out != nil {
		if err := s.q.out.finish(s.q.meta); err != nil {
			return failed(err)
		}
	}
	t.at("written")
	original, r := t.backUpAndCheck()
	if r != nil {
		return r
	}
	var notDurable error
	if s.q.out != nil {
		before, err := quarantineBefore(t.store, base(s.q.target))
		if err != nil {
			return failed(fmt.Errorf("%w: reading %s: %v", inplace.ErrWriteFailed, s.q.target, err))
		}
		nd, err := s.q.out.commit()
		if err != nil {
			return failed(err)
		}
		s.q.out, notDurable, qBefore = nil, nd, before
	}
	t.at("quarantined")
	put := func() error {
		nd, err := s.out.commit()
		if err != nil {
			return err
		}
		s.out = nil
		if nd != nil {
			notDurable = nd
		}
		return nil
	}
	if inPlace {
		// Codex's order: its projection of the thread first, then the file.
		if err := t.deleteProjection(); err != nil {
			return failed(err)
		}
		// The one guard of every replace: the input still as read, no
		// writer, and what arrives during the rename kept.
		from, _ := t.firstChange()
		sw := inplace.Switch{Read: t.src.size, From: from, Place: t.place, Force: t.opts.Force, At: t.at}
		if t.backupLinked {
			sw.Kept = t.Backup // the replaced inode itself
		}
		late, err := t.lock.Replace(sw, put)
		if err != nil {
			t.restoreProjection()
			return failed(err)
		}
		t.Late = late
	} else if err := put(); err != nil {
		return failed(err)
	}
	t.wrote(notDurable, original, qBefore)
	return nil
}

// failed is the refusal of a commit that failed with err.
func (t *Txn) failed(err error) *inplace.Refusal {
	var r *inplace.Refusal
	if errors.As(err, &r) {
		return r
	}
	if errors.Is(err, inplace.ErrFileChanged) {
		return &inplace.Refusal{Kind: inplace.Changed, Path: t.Path, Err: err}
	}
	return &inplace.Refusal{Kind: inplace.WriteFailed, Path: t.Target, Err: err}
}

// resultMeta gives the result its metadata. In place, the result is the
// user's file: its mode, owner, group and xattrs. With -o, an existing
// output keeps its own; a new one takes the input's mode.
func (t *Txn) resultMeta() func(*os.File) error {
	if t.opts.Output == "" {
		return func(f *os.File) error { return outfile.CopyMetadata(f, t.src.fi, t.Path) }
	}
	if fi, err := os.Stat(t.Target); err == nil {
		return func(f *os.File) error { return outfile.CopyMetadata(f, fi, t.Target) }
	}
	mode := t.src.fi.Mode().Perm()
	return func(f *os.File) error { return f.Chmod(mode) }
}

// backUpAndCheck, in place, refuses a file that cannot be replaced, keeps
// the backup and checks the input unchanged (its size and SHA-256, for the
// undo record); in both cases it checks for writers again.
func (t *Txn) backUpAndCheck() (fileSum, *inplace.Refusal) {
	inPlace := t.opts.Output == ""
	if inPlace {
		if err := inplace.Replaceable(t.Path, t.src.fi); err != nil {
			return fileSum{}, &inplace.Refusal{Kind: inplace.WriteFailed, Path: t.Path, Err: err}
		}
	}
	if inPlace && !t.opts.NoBackup {
		var err error
		if t.Backup, err = t.makeBackup(); err != nil {
			return fileSum{}, t.failed(fmt.Errorf("%w: keeping a backup: %v", inplace.ErrWriteFailed, err))
		}
	}
	t.at("backed-up")
	var original fileSum
	if inPlace {
		var err error
		if original, err = t.unchanged(); err != nil {
			return fileSum{}, t.failed(err)
		}
	}
	if r := t.checkWriters(); r != nil {
		return fileSum{}, r // a writer opened the file since Begin looked
	}
	t.at("checked")
	return original, nil
}

// wrote records a write that happened: what the user must know of it, and
// the undo record of an in-place write with a backup.
func (t *Txn) wrote(notDurable error, original fileSum, qBefore *quarantineState) {
	t.Wrote = true
	if notDurable != nil {
		t.Warning = fmt.Sprintf("%s was replaced, but syncing its directory failed: %v", t.Target, notDurable)
	}
	t.at("renamed")
	if t.opts.Output == "" && t.Backup != "" {
		if err := t.recordUndo(original, qBefore); err != nil && t.Warning == "" {
			t.Warning = fmt.Sprintf("%s was repaired, but the record for repair --undo could not be written: %v", t.Path, err)
		}
	}
}

// fileSum is a file's size and SHA-256.
type fileSum struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// unchanged checks, right before the rename, that the input is still what
// the analysis read: the same file (inode), size and mtime, and the same
// bytes. It returns their SHA-256, for the undo record.
func (t *Txn) unchanged() (fileSum, error) {
	path := t.Path
	fi, err := os.Lstat(path)
	if err != nil {
		return fileSum{}, fmt.Errorf("%w: %v", inplace.ErrFileChanged, err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0 || !os.SameFile(fi, t.src.fi):
		return fileSum{}, fmt.Errorf("%w: %s was replaced by another file", inplace.ErrFileChanged, path)
	case fi.Size() != t.src.fi.Size():
		return fileSum{}, fmt.Errorf("%w: %s is now %d bytes, it was %d", inplace.ErrFileChanged, path, fi.Size(), t.src.fi.Size())
	case !fi.ModTime().Equal(t.src.fi.ModTime()):
		return fileSum{}, fmt.Errorf("%w: %s was modified at %s", inplace.ErrFileChanged, path, fi.ModTime().Format("15:04:05.000"))
	}
	f, err := os.Open(path)
	if err != nil {
		return fileSum{}, fmt.Errorf("%w: %v", inplace.ErrFileChanged, err)
	}
	defer f.Close()
	h := newHashingReader(f, t.seed)
	sum := sha256.New()
	if _, err := io.CopyBuffer(sum, h, make([]byte, 1<<20)); err != nil {
		return fileSum{}, fmt.Errorf("%w: %v", inplace.ErrFileChanged, err)
	}
	if h.n != t.src.size || h.h.Sum64() != t.src.hash {
		return fileSum{}, fmt.Errorf("%w: the content of %s differs from what was read", inplace.ErrFileChanged, path)
	}
	return fileSum{Size: h.n, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// makeBackup keeps the input as FILE.bak (FILE.bak.1, .2, ... when taken)
// in the store: a hard link of the locked inode when the file system
// allows it (instant, and the backup is the very inode that is replaced),
// a copy otherwise.
func (t *Txn) makeBackup() (string, error) {
	for i := 0; i <= artifacts.MaxIndex; i++ {
		name := t.place.Backup(i)
		err := t.lock.Link(t.store, base(name))
		if err == nil {
			t.backupLinked = true
			return name, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		// No hard links here: copy, never overwriting an existing backup.
		if err := copyNew(t.Path, t.store, base(name)); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("%s through .%d all exist", t.place.Backup(0), artifacts.MaxIndex)
}

// copyNew copies src to a new entry name of dir.
func copyNew(src string, dir *outfile.Dir, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	outfile.CopyMetadata(out, fi, src) // best effort: the backup is the user's too
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Remove(name)
	}
	return err
}
