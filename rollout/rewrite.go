package rollout

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strconv"
)

// This file is the byte-preserving writer behind `rollout repair`. It knows
// bytes, lines and JSON members, never rules: checks/ plans the edits and
// this writer applies them while streaming. A line with no edit is copied
// verbatim, terminator included; a touched line is spliced at the offsets
// the scanner reports, so its key order and every byte no edit names stay.

// Change is one change the writer made.
type Change struct {
	Label   string
	Line    int   // input line
	Offset  int64 // input byte offset of the line
	Part    int   // object within the line
	Action  string
	Path    string // EditSet: the member changed ("payload.id", "ordinal")
	Before  []byte // old value or bytes; valid during the callback only
	After   []byte // new value or bytes; valid during the callback only
	OutLine int    // output line holding the result (0 when removed)
}

// Change actions.
const (
	ActionSet        = "set"
	ActionQuarantine = "quarantine"
	ActionSplit      = "split"
	ActionMove       = "move"
	ActionInsert     = "insert"
	ActionLF         = "lf"
	ActionEdit       = "edit"      // an EditSplice: Before and After are raw bytes of the object
	ActionCut        = "cut"       // an EditCut: Before is the torn bytes, now in quarantine
	ActionStripBOM   = "strip-bom" // an EditCut of a byte order mark: Before is the 3 bytes, gone
)

// Skip is an edit that could not be applied; the line stays as it was.
type Skip struct {
	Label  string
	Line   int
	Reason string
}

// QuarantineEntry is a line, or one object of a concatenated line, removed
// from the output.
type QuarantineEntry struct {
	Line   int
	Offset int64 // input byte offset of Raw's first byte
	Reason string
	Raw    []byte // valid during the callback only
	EOL    string // the terminator that followed Raw in the input ("" if none)
}

// AppendJSON appends the entry as one JSON line (with "\n"): raw as a JSON
// string, or raw_base64 when it is not UTF-8.
func (q *QuarantineEntry) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendInt(dst, int64(q.Line), 10)
	dst = append(dst, `,"byte_offset":`...)
	dst = strconv.AppendInt(dst, q.Offset, 10)
	dst = append(dst, `,"reason":`...)
	dst = AppendJSONString(dst, q.Reason)
	if validUTF8(q.Raw) {
		dst = append(dst, `,"raw":`...)
		dst = AppendJSONString(dst, string(q.Raw))
	} else {
		dst = append(dst, `,"raw_base64":"`...)
		dst = appendBase64(dst, q.Raw)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"eol":`...)
	dst = AppendJSONString(dst, q.EOL)
	return append(dst, "}\n"...)
}

// DiffLine is one line of the rewrite seen as a diff: '=' unchanged, '-'
// removed, '+' added. Text holds the line with its terminator (nil for an
// unchanged line too long to read); it is valid during the callback only.
type DiffLine struct {
	Op       byte
	Old, New int // line numbers (0 when the line is not on that side)
	Text     []byte
}

// RewriteOptions configure Rewrite.
type RewriteOptions struct {
	MaxLineBytes int64 // lines longer than this are copied verbatim, never edited
	// Reopen opens the source again from its start; it is needed only when
	// the plan moves an object to the front.
	Reopen       func() (io.ReadCloser, error)
	OnChange     func(Change)
	OnSkip       func(Skip)
	OnQuarantine func(QuarantineEntry) error
	// OnLine, when set, sees every line (for a diff); it makes every line
	// be read in full.
	OnLine func(DiffLine) error
	// RememberSeed keys the remembered values (any seed; tests fix one).
	RememberSeed maphash.Seed
}

// RewriteStats count what a rewrite read and wrote.
type RewriteStats struct {
	LinesIn, LinesOut int
	BytesIn, BytesOut int64
	Changes           int
}

// ErrSourceChanged is returned when the source no longer matches what the
// plan was made from (a line to move differs between two reads).
var ErrSourceChanged = errors.New("the file changed while it was being repaired")

// Rewrite streams src to dst applying plan. It reads src to its end.
func Rewrite(dst io.Writer, src io.Reader, plan *Plan, opts RewriteOptions) (*RewriteStats, error) {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if plan == nil {
		plan = &Plan{}
	}
	if opts.RememberSeed == (maphash.Seed{}) {
		opts.RememberSeed = maphash.MakeSeed()
	}
	cw := &countWriter{w: dst}
	w := &rewriter{
		plan:    plan,
		opts:    opts,
		out:     bufio.NewWriterSize(cw, 256<<10),
		count:   cw,
		memory:  map[memKey][][]byte{},
		recalls: plan.recalls(),
	}
	w.whole, _ = dst.(LineWriter)
	if plan.Sequence != nil {
		w.seq = plan.Sequence.Start
	}
	err := w.run(src)
	if ferr := w.out.Flush(); err == nil {
		err = ferr
	}
	w.stats.BytesOut = cw.n
	return &w.stats, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type memKey struct {
	h uint64
	n int
}

type rewriter struct {
	plan  *Plan
	opts  RewriteOptions
	out   *bufio.Writer
	count *countWriter // under out
	whole LineWriter   // the destination, when it takes long lines whole
	stats RewriteStats

	seq      int64 // next Sequence value
	outLine  int   // output lines written
	openLine bool  // the last line written has no terminator yet

	memory  map[memKey][][]byte // remembered values by the original bytes of their target
	used    map[memKey]int      // recalls made on the current line
	recalls bool                // some edit recalls: values are remembered
	paths   map[string]string   // memberPath: the member names of changes, by path
	sps     []splice            // the splices of the current object
	ctx     EditContext         // handed to Value functions, which must not keep it
	spliced []byte              // the edited objects of the current line, one after the other

	moveLine    int     // input line of the object moved to the front (0: none)
	movePart    int     // its object index
	moveRaw     []byte  // the whole input line, to check it did not change
	moveApplied []bool  // edits of that line applied to the moved object
	moveChange  *Change // reported when the stream reaches the line

	src       lineSource
	scratch   []byte
	pathBuf   []byte
	lineEdits []Edit // the current line's edits and the plan's Every edits
	ownEdits  []Edit // the current line's edits
	// payMembers is the buffer of the payload members classify notes.
	payMembers []memberRange
}

// line is one input line read in full.
type line struct {
	rec   Record
	edits []Edit // the line's own edits, then the plan's Every edits
	own   int    // how many are the line's own (only those report a skip)
	spans []span
}

// span is one object of a line and the bytes that belong with it: the
// white space before it, and for the last object what follows it.
type span struct {
	start, end int // the span in Raw
	objS, objE int // the object in Raw
}

func (w *rewriter) run(src io.Reader) error {
	if err := w.prefetch(); err != nil {
		return err
	}
	w.src = lineSource{br: bufio.NewReaderSize(src, 256<<10), at: RereaderOf(src)}
	defer w.src.release()
	n := 0
	plan := w.plan
	plan.sort()
	next := 0 // the first edit of a line not read yet
	for {
		n++
		for next < len(plan.lines) && plan.lines[next] < n {
			next++ // a line number below 1: no such line
		}
		var edits []Edit
		first := next
		if next < len(plan.lines) && plan.lines[next] == n {
			j := plan.end(next)
			w.ownEdits = plan.appendEdits(w.ownEdits[:0], next, j)
			edits = w.ownEdits
			next = j
		}
		full := len(edits) > 0 || len(w.plan.Every) > 0 || w.plan.Sequence != nil || w.opts.OnLine != nil || n == w.moveLine
		if !full {
			size, term, err := w.copyLine()
			if err != nil {
				return err
			}
			if size == 0 {
				break
			}
			w.stats.LinesIn++
			w.stats.LinesOut++
			w.outLine++
			w.openLine = !term
			continue
		}
		offset := w.src.off
		raw, eol, size, oversized, err := w.readLine()
		if err != nil {
			return err
		}
		if size == 0 {
			next = first // no such line: its edits are skipped below
			break
		}
		w.stats.LinesIn++
		if oversized {
			// Copied verbatim by readLine; it cannot be edited. It keeps
			// its number: the writer numbered it.
			if w.plan.Sequence != nil {
				w.seq++
			}
			w.stats.LinesOut++
			w.outLine++
			w.openLine = eol == ""
			for _, e := range edits {
				w.skip(e, n, "the line is longer than --max-line-bytes: not read, kept as is")
			}
			if w.opts.OnLine != nil {
				if err := w.opts.OnLine(DiffLine{Op: '=', Old: n, New: w.outLine}); err != nil {
					return err
				}
			}
			continue
		}
		l := &line{rec: Record{Line: n, Offset: offset, Raw: raw, EOL: eol, Size: int64(len(raw)), payMembers: w.payMembers[:0]}, edits: edits, own: len(edits)}
		if len(w.plan.Every) > 0 {
			w.lineEdits = append(append(w.lineEdits[:0], edits...), w.plan.Every...)
			l.edits = w.lineEdits
		}
		classify(&l.rec)
		w.payMembers = l.rec.payMembers // reused by the next line, as the Reader does
		if err := w.process(l); err != nil {
			return err
		}
	}
	for i := next; i < len(plan.lines); i++ {
		w.skip(plan.kinds[plan.refs[i]], plan.lines[i], "the file has no such line")
	}
	w.stats.BytesIn = w.src.off
	return nil
}

// copyLine copies one line verbatim. term reports a "\n" terminator.
func (w *rewriter) copyLine() (size int64, term bool, err error) {
	defer func() { w.src.off += size }()
	for {
		chunk, rerr := w.src.br.ReadSlice('\n')
		if len(chunk) > 0 {
			if size == 0 {
				if err := w.beginLine(); err != nil {
					return 0, false, err
				}
			}
			if _, err := w.out.Write(chunk); err != nil {
				return 0, false, err
			}
			size += int64(len(chunk))
		}
		switch {
		case rerr == nil:
			return size, true, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case errors.Is(rerr, io.EOF):
			return size, false, nil
		default:
			return 0, false, fmt.Errorf("reading line %d: %w", w.stats.LinesIn+1, rerr)
		}
	}
}

// readLine reads one line in full. A line over the maximum is copied
// verbatim as it is read and reported as oversized.
func (w *rewriter) readLine() (raw []byte, eol string, size int64, oversized bool, err error) {
	began := false
	verbatim := func(b []byte) error {
		if !began {
			began = true
			if err := w.beginLine(); err != nil {
				return err
			}
		}
		_, err := w.out.Write(b)
		return err
	}
	r, err := w.src.next(min(w.opts.MaxLineBytes, math.MaxInt64-2)+2, verbatim)
	switch {
	case errors.Is(err, ErrLineChanged):
		return nil, "", 0, false, fmt.Errorf("line %d: %w: %w", w.stats.LinesIn+1, ErrSourceChanged, err)
	case err != nil:
		return nil, "", 0, false, fmt.Errorf("reading line %d: %w", w.stats.LinesIn+1, err)
	}
	if r.oversized {
		if r.terminated {
			eol = "\n"
		}
		return nil, eol, r.size, true, nil
	}
	raw, eol = r.split()
	if int64(len(raw)) > w.opts.MaxLineBytes {
		if err := verbatim(raw); err != nil {
			return nil, "", 0, false, err
		}
		if err := verbatim([]byte(eol)); err != nil {
			return nil, "", 0, false, err
		}
		return nil, eol, r.size, true, nil
	}
	return raw, eol, r.size, false, nil
}

// beginLine is called before a new output line: a line written without
// terminator (the input's last line) gets one when something follows it.
func (w *rewriter) beginLine() error {
	if w.openLine {
		w.openLine = false
		return w.out.WriteByte('\n')
	}
	return nil
}

// writeLine writes one whole output line.
func (w *rewriter) writeLine(b []byte, eol string) error {
	if err := w.beginLine(); err != nil {
		return err
	}
	if w.whole != nil && len(b) > readBufferSize {
		// Whole, after what is buffered: a Reader at the other end of a
		// LinePipe uses b itself.
		if err := w.out.Flush(); err != nil {
			return err
		}
		if err := w.whole.WriteLine(b, eol); err != nil {
			return err
		}
		w.count.n += int64(len(b) + len(eol))
	} else {
		if _, err := w.out.Write(b); err != nil {
			return err
		}
		if _, err := w.out.WriteString(eol); err != nil {
			return err
		}
	}
	w.openLine = eol == ""
	w.outLine++
	w.stats.LinesOut++
	return nil
}

func (w *rewriter) change(c Change) {
	w.stats.Changes++
	if w.opts.OnChange != nil {
		w.opts.OnChange(c)
	}
}

func (w *rewriter) skip(e Edit, line int, reason string) {
	if w.opts.OnSkip != nil {
		w.opts.OnSkip(Skip{Label: e.Label, Line: line, Reason: reason})
	}
}

func (w *rewriter) diff(op byte, old, new int, text []byte, eol string) error {
	if w.opts.OnLine == nil {
		return nil
	}
	if eol != "" {
		w.scratch = append(append(w.scratch[:0], text...), eol...)
		text = w.scratch
	}
	return w.opts.OnLine(DiffLine{Op: op, Old: old, New: new, Text: text})
}

// cutTorn moves the torn bytes of a glued line to quarantine when the
// line has an EditCut; its records become the line's spans, the first
// starting where the torn bytes end. Without the edit the line has no
// spans: it is written as it is.
func (w *rewriter) cutTorn(l *line) error {
	rec := &l.rec
	e, ok := has(l.edits, EditCut)
	if !ok {
		return nil
	}
	torn := rec.Raw[:rec.Parts[0][0]]
	if rec.BOM {
		// A byte order mark holds nothing to keep: it is stripped.
		w.change(Change{Label: e.Label, Line: rec.Line, Offset: rec.Offset, Action: ActionStripBOM, Before: torn})
	} else {
		if err := w.quarantine(QuarantineEntry{Line: rec.Line, Offset: rec.Offset, Reason: e.Label, Raw: torn}); err != nil {
			return err
		}
		w.change(Change{Label: e.Label, Line: rec.Line, Offset: rec.Offset, Action: ActionCut, Before: torn})
	}
	l.spans = make([]span, len(rec.Parts))
	prev := rec.Parts[0][0]
	for i, p := range rec.Parts {
		l.spans[i] = span{start: prev, end: p[1], objS: p[0], objE: p[1]}
		prev = p[1]
	}
	l.spans[len(l.spans)-1].end = len(rec.Raw)
	return nil
}

// spansOf splits a line into its objects.
func spansOf(rec *Record) []span {
	switch rec.Shape {
	case ShapeObject:
		return []span{{0, len(rec.Raw), 0, len(rec.Raw)}}
	case ShapeConcatenated:
		sp := make([]span, len(rec.Parts))
		prev := 0
		for i, p := range rec.Parts {
			sp[i] = span{start: prev, end: p[1], objS: p[0], objE: p[1]}
			prev = p[1]
		}
		sp[len(sp)-1].end = len(rec.Raw)
		return sp
	}
	return nil
}

func has(edits []Edit, k EditKind) (Edit, bool) {
	for _, e := range edits {
		if e.Kind == k {
			return e, true
		}
	}
	return Edit{}, false
}

// process applies the edits of one line and writes what remains of it.
func (w *rewriter) process(l *line) error {
	rec := &l.rec
	n := rec.Line
	w.used = nil
	if n == w.moveLine {
		if !bytes.Equal(rec.Raw, w.moveRaw) {
			return fmt.Errorf("line %d: %w", n, ErrSourceChanged)
		}
		if w.movePart > 0 || w.outLine > 1 {
			w.change(*w.moveChange)
		}
	}
	// A line-level drop takes the whole line, whatever its shape; so does
	// a drop of every object of the line (the terminator goes with them).
	for _, e := range l.edits {
		if e.Kind == EditDrop && e.Match == nil {
			return w.dropLine(l, e)
		}
	}
	l.spans = spansOf(rec)
	if rec.Shape == ShapeGlued {
		if err := w.cutTorn(l); err != nil {
			return err
		}
	}
	if n != w.moveLine && len(l.spans) > 0 {
		var first Edit
		all := true
		for _, sp := range l.spans {
			e, _, ok := w.dropEdit(l.edits, rec.Raw[sp.objS:sp.objE])
			if !ok {
				all = false
				break
			}
			if first.Kind == 0 {
				first = e
			}
		}
		if all {
			return w.dropLine(l, first)
		}
	}
	eol := rec.EOL
	lf, normalise := has(l.edits, EditLF)
	if normalise = normalise && IsCRLF(eol); normalise {
		eol = "\n"
	}
	lfChange := func() {
		if normalise {
			w.change(Change{Label: lf.Label, Line: n, Offset: rec.Offset, Action: ActionLF, Before: []byte(rec.EOL), After: []byte("\n"), OutLine: w.outLine})
		}
	}
	if len(l.spans) == 0 {
		for _, e := range l.edits[:l.own] {
			if e.Kind != EditLF && e.Kind != EditInsertAfter {
				w.skip(e, n, "the line is not a JSON object")
			}
		}
		if err := w.writeLine(rec.Raw, eol); err != nil {
			return err
		}
		lfChange()
		if err := w.lineDiff(l, [][]byte{rec.Raw}, []string{eol}); err != nil {
			return err
		}
		return w.insertAfter(l)
	}

	split, doSplit := has(l.edits, EditSplit)
	doSplit = doSplit && len(l.spans) > 1
	applied := make([]bool, len(l.edits))
	if n == w.moveLine {
		copy(applied, w.moveApplied)
	}
	var keptBuf [4][]byte
	kept := keptBuf[:0] // edited spans still in the output
	w.spliced = w.spliced[:0]
	if cap(w.spliced) > 1<<20 {
		// A long line's edit: its buffer is not kept for the next line,
		// but the next long edit may take it back.
		spare(w.spliced)
		w.spliced = nil
	}
	for k, sp := range l.spans {
		if n == w.moveLine && k == w.movePart {
			continue
		}
		obj := rec.Raw[sp.objS:sp.objE]
		if e, i, ok := w.dropEdit(l.edits, obj); ok {
			applied[i] = true
			if err := w.quarantine(QuarantineEntry{Line: n, Offset: rec.Offset + int64(sp.start), Reason: e.Label,
				Raw: rec.Raw[sp.start:sp.end]}); err != nil {
				return err
			}
			w.change(Change{Label: e.Label, Line: n, Offset: rec.Offset, Part: k, Action: ActionQuarantine, Before: rec.Raw[sp.start:sp.end]})
			continue
		}
		outLine := w.outLine + 1
		if doSplit {
			outLine += len(kept)
		}
		edited, err := w.editObject(l, k, sp, applied, outLine)
		if err != nil {
			return err
		}
		kept = append(kept, edited)
	}
	for i, e := range l.edits[:l.own] {
		switch e.Kind {
		case EditSet, EditSplice, EditDrop:
			if !applied[i] {
				w.skip(e, n, "no object on the line matches")
			}
		}
	}

	if len(kept) == 0 {
		if err := w.lineDiff(l, nil, nil); err != nil {
			return err
		}
		return w.insertAfter(l)
	}
	joined := kept[0] // a line of one object (nearly all) is not copied again
	if len(kept) > 1 {
		joined = bytes.Join(kept, nil)
	}
	outs, eols := [][]byte{joined}, []string{eol}
	if doSplit {
		inner := eol
		if inner == "" {
			inner = "\n" // the input's last line, split: only its last part stays open
		}
		outs, eols = kept, make([]string, len(kept))
		for i := range eols {
			eols[i] = inner
		}
		eols[len(eols)-1] = eol
	}
	for i, b := range outs {
		if err := w.writeLine(b, eols[i]); err != nil {
			return err
		}
	}
	lfChange()
	if doSplit {
		w.change(Change{Label: split.Label, Line: n, Offset: rec.Offset, Action: ActionSplit,
			After: []byte(strconv.Itoa(len(l.spans)) + " lines"), OutLine: w.outLine - len(outs) + 1})
	}
	if err := w.lineDiff(l, outs, eols); err != nil {
		return err
	}
	return w.insertAfter(l)
}

func (w *rewriter) dropEdit(edits []Edit, obj []byte) (Edit, int, bool) {
	for i, e := range edits {
		if e.Kind == EditDrop && e.Match != nil && e.Match(obj) {
			return e, i, true
		}
	}
	return Edit{}, 0, false
}

func (w *rewriter) dropLine(l *line, e Edit) error {
	rec := &l.rec
	if err := w.quarantine(QuarantineEntry{Line: rec.Line, Offset: rec.Offset, Reason: e.Label, Raw: rec.Raw, EOL: rec.EOL}); err != nil {
		return err
	}
	w.change(Change{Label: e.Label, Line: rec.Line, Offset: rec.Offset, Action: ActionQuarantine, Before: rec.Raw})
	return w.diff('-', rec.Line, 0, rec.Raw, rec.EOL)
}

func (w *rewriter) quarantine(q QuarantineEntry) error {
	if w.opts.OnQuarantine == nil {
		return nil
	}
	return w.opts.OnQuarantine(q)
}

// lineDiff reports an input line and the output lines it became.
func (w *rewriter) lineDiff(l *line, outs [][]byte, eols []string) error {
	if w.opts.OnLine == nil {
		return nil
	}
	rec := &l.rec
	first := w.outLine - len(outs) + 1
	if len(outs) == 1 && bytes.Equal(outs[0], rec.Raw) && eols[0] == rec.EOL {
		return w.diff('=', rec.Line, first, rec.Raw, rec.EOL)
	}
	if err := w.diff('-', rec.Line, 0, rec.Raw, rec.EOL); err != nil {
		return err
	}
	for i, b := range outs {
		if err := w.diff('+', 0, first+i, b, eols[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *rewriter) insertAfter(l *line) error {
	for _, e := range l.edits {
		if e.Kind != EditInsertAfter {
			continue
		}
		c := &EditContext{Line: l.rec.Line}
		if len(l.spans) > 0 {
			c.Object = l.rec.Raw[l.spans[0].objS:l.spans[0].objE]
		}
		obj, err := e.Value(c)
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", l.rec.Line, e.Label, err)
		}
		if !validObject(obj) {
			return fmt.Errorf("line %d: %s: the new line is not a JSON object", l.rec.Line, e.Label)
		}
		if w.plan.Sequence != nil {
			sp, err := w.sequenceSplice(obj, l.rec.Line, nil)
			if err != nil {
				return err
			}
			if sp != nil {
				obj = appendSplices(nil, obj, []splice{*sp})
			}
		}
		if err := w.writeLine(obj, "\n"); err != nil {
			return err
		}
		w.change(Change{Label: e.Label, Line: l.rec.Line, Offset: l.rec.Offset, Action: ActionInsert, After: obj, OutLine: w.outLine})
		if err := w.diff('+', 0, w.outLine, obj, "\n"); err != nil {
			return err
		}
	}
	return nil
}

// prefetch reads the object to move to the front before the stream starts.
func (w *rewriter) prefetch() error {
	var move Edit
	at := 0
	for n, edits := range w.plan.Lines {
		if e, ok := has(edits, EditMoveFront); ok {
			move, at = e, n
			break
		}
	}
	if at == 0 {
		return nil
	}
	if w.opts.Reopen == nil {
		return errors.New("moving a line to the front needs RewriteOptions.Reopen")
	}
	src, err := w.opts.Reopen()
	if err != nil {
		return err
	}
	defer src.Close()
	rd := NewReader(src, w.opts.MaxLineBytes)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			w.skip(move, at, "the file has no such line")
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Line < at {
			continue
		}
		own := w.plan.At(at)
		l := &line{rec: Record{Line: rec.Line, Offset: rec.Offset, Raw: bytes.Clone(rec.Raw), EOL: rec.EOL, Size: rec.Size},
			edits: append(append([]Edit(nil), own...), w.plan.Every...), own: len(own)}
		if rec.Raw == nil {
			w.skip(move, at, "the line is longer than --max-line-bytes: not read, kept as is")
			return nil
		}
		classify(&l.rec)
		l.spans = spansOf(&l.rec)
		part := -1
		for k, sp := range l.spans {
			if move.Match == nil || move.Match(l.rec.Raw[sp.objS:sp.objE]) {
				part = k
				break
			}
		}
		if part < 0 {
			w.skip(move, at, "no object on the line matches")
			return nil
		}
		w.moveLine, w.movePart, w.moveRaw = at, part, l.rec.Raw
		return w.writeMoved(l, part, move)
	}
}

// writeMoved writes the moved object as the first output line.
func (w *rewriter) writeMoved(l *line, k int, move Edit) error {
	rec := &l.rec
	eol := rec.EOL
	if e, ok := has(l.edits, EditLF); ok && IsCRLF(eol) {
		eol = "\n"
		w.change(Change{Label: e.Label, Line: rec.Line, Offset: rec.Offset, Part: k, Action: ActionLF, Before: []byte(rec.EOL), After: []byte("\n"), OutLine: 1})
	}
	if eol == "" {
		eol = "\n" // it was the last line; now it is the first
	}
	w.moveApplied = make([]bool, len(l.edits))
	edited, err := w.editObject(l, k, l.spans[k], w.moveApplied, 1)
	if err != nil {
		return err
	}
	if err := w.writeLine(edited, eol); err != nil {
		return err
	}
	// The change is reported when the stream reaches the line: moving the
	// first object of what would be the first line anyway is no change.
	w.moveChange = &Change{Label: move.Label, Line: rec.Line, Offset: rec.Offset, Part: k, Action: ActionMove, OutLine: 1}
	return w.diff('+', 0, 1, edited, eol)
}
