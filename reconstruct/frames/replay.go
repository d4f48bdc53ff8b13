// Package frames replays streaming frame logs (spec: frames.md): one
// assistant-message event per line, bare ({"type":"text_delta",...}) or
// wrapped by the agent ({"type":"message_update","assistantMessageEvent":
// {...},"message":{...}}). It sits under reconstruct/, one step below the
// engine (it imports only rollout/): the engine routes the records of a
// frame log here and turns the events into observations.
//
// The replay groups frames into streams (one assistant message, from
// start/message_start to done/error/message_end) and blocks (by
// contentIndex), accumulates each block's deltas, compares them with the
// block's *_end content or the terminal message, and decides per stream
// which delta frames reclamation drops (Plan) under the caps of the
// reference design.
//
// Memory is the accumulated delta text of the open stream's blocks, never
// the log: the partial messages that make a log grow with the square of the
// response are skipped, not decoded.
package frames

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"sort"

	"github.com/rollout-dev/rollout/rollout"
)

// Default caps of the reference design, per staged (rewritten) stream.
const (
	DefaultMaxFrames       = 10_000
	DefaultMaxBytes  int64 = 16 << 20
)

// Options configure a replay.
type Options struct {
	// MaxFrames caps the frames of a reclaimed stream (0: DefaultMaxFrames).
	MaxFrames int
	// MaxBytes caps the bytes of a reclaimed stream and of any single frame
	// in it (0: DefaultMaxBytes). A frame over the cap is never split: the
	// stream is kept as it is.
	MaxBytes int64
	// Lines records the lines reclamation drops (Stream.Drop) and reports
	// each stream it reclaims (Reclaim events).
	Lines bool

	content bool // keep each stream's final content (Contents, Check)
}

func (o Options) withDefaults() Options {
	if o.MaxFrames <= 0 {
		o.MaxFrames = DefaultMaxFrames
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return o
}

// EventKind names what the replay reports.
type EventKind int

const (
	// DeltaMismatch: a block's concatenated deltas differ from its *_end
	// content or the terminal message (MismatchFacts).
	DeltaMismatch EventKind = iota + 1
	// Unterminated: a block whose deltas never end (no *_end, and no
	// completed message confirms them). At the block's first frame
	// (UnterminatedFacts).
	Unterminated
	// SupersededBytes: once per log, at the first frame reclamation drops
	// (or the first rejected stream), when reclamation frees bytes or a cap
	// keeps a stream whole (SupersededFacts).
	SupersededBytes
	// UnknownType: once per unknown frame type, at its first frame
	// (UnknownTypeFacts).
	UnknownType
	// Reclaim (with Options.Lines): a stream reclamation rewrites, at its
	// first frame (ReclaimFacts).
	Reclaim
)

// Event is one fact at one line; Facts is the XxxFacts of its Kind.
type Event struct {
	Kind   EventKind
	Line   int
	Offset int64
	Facts  any
}

// MismatchFacts: Against is the frame type the deltas were compared with.
type MismatchFacts struct {
	ContentIndex int    `json:"content_index"`
	BlockKind    string `json:"kind"` // text, thinking, toolCall, ...
	Against      string `json:"against"`
	Reason       string `json:"reason"`
}

// UnterminatedFacts: DeltaBytes is the length of the concatenated deltas.
type UnterminatedFacts struct {
	ContentIndex int    `json:"content_index"`
	BlockKind    string `json:"kind"` // text, thinking, toolCall, ...
	Deltas       int    `json:"deltas"`
	DeltaBytes   int    `json:"delta_bytes"`
	Reason       string `json:"reason"`
}

// SupersededFacts: what reclamation frees in the whole log (Ratio of
// LogBytes, rounded to 4 places), and the streams it must keep whole.
type SupersededFacts struct {
	Bytes           int64   `json:"bytes"`
	Frames          int     `json:"frames"`
	Streams         int     `json:"streams"`
	LogBytes        int64   `json:"log_bytes"`
	Ratio           float64 `json:"ratio"`
	RejectedStreams int     `json:"rejected_streams"`
	RejectedBytes   int64   `json:"rejected_bytes"`
}

// UnknownTypeFacts: Count is the frames of the type in the log.
type UnknownTypeFacts struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
}

// ReclaimFacts: the line ranges reclamation drops from one stream.
type ReclaimFacts struct {
	Drop     []Range `json:"drop"`
	Frames   int     `json:"frames"`
	Bytes    int64   `json:"bytes"`
	LastLine int     `json:"last_line"`
}

// Status is what reclamation does with a stream.
type Status int

const (
	NothingSuperseded Status = iota // no delta frame is superseded
	Reclaimed                       // the superseded delta frames are dropped
	Rejected                        // superseded deltas exist, but the stream is kept whole (Reason)
)

func (s Status) String() string {
	return [...]string{"nothing superseded", "reclaimed", "rejected"}[s]
}

// Range is a run of lines [From, To], 1-based and inclusive.
type Range struct{ From, To int }

// Stream is one assistant message as the replay saw it.
type Stream struct {
	FirstLine, LastLine int
	// Terminal is the frame type that ended the stream: "done",
	// "message_end", "error", or "" when it never ended (truncated).
	Terminal string
	Lines    int   // physical lines from the first to the last frame
	Bytes    int64 // their bytes, line terminators included

	Status Status
	Reason string // why a stream with superseded deltas is kept (Rejected)
	// DropFrames and DropBytes are what reclamation frees (Reclaimed), or
	// would have freed (Rejected).
	DropFrames int
	DropBytes  int64
	Drop       []Range // the delta lines dropped (Plan only; Reclaimed only)

	Blocks []Block // the final content, by contentIndex (Contents and Check only)
}

// Block is the final content of one content block.
type Block struct {
	Index int
	Kind  string
	// Content is the text; for tool calls the canonical JSON of the
	// arguments (keys sorted, numbers in shortest form).
	Content string
	// Source says where the content comes from: "end" (the *_end frame),
	// "message" (the terminal message), "deltas" (an unterminated block) or
	// "start" (a block that never got a delta).
	Source string
}

// Replay is the streaming replay of one frame log. Give it every physical
// line with Line and every frame of that line with Feed, then call Finish.
type Replay struct {
	opts     Options
	emit     func(Event)
	onStream func(*Stream)

	// the physical line last given to Line
	line  int
	off   int64
	size  int64 // bytes incl. terminator
	parts int   // frames on the line (more than one: concatenated)
	seen  int   // frames of the line fed so far
	end   int64 // bytes read

	cur *stream

	unknown map[string]*unknownType
	tot     totals
}

type unknownType struct {
	line  int
	off   int64
	count int
}

type totals struct {
	frames, streams int
	bytes           int64
	rejected        int
	rejectedBytes   int64
	firstLine       int
	firstOff        int64
	firstRejLine    int
	firstRejOff     int64
	capped          int // streams rejected by a cap (the others have findings of their own)
}

// maxUnknownTypes bounds the memory spent on unknown types; further types
// are still counted, under the last one's entry.
const maxUnknownTypes = 64

// NewReplay starts a replay that reports to emit (which may be nil).
func NewReplay(opts Options, emit func(Event)) *Replay {
	if emit == nil {
		emit = func(Event) {}
	}
	return &Replay{opts: opts.withDefaults(), emit: emit, unknown: map[string]*unknownType{}}
}

// OnStream registers fn to receive every stream as it ends.
func (r *Replay) OnStream(fn func(*Stream)) { r.onStream = fn }

type stream struct {
	Stream
	firstOff int64
	blocks   map[int]*block
	// the largest line of the stream that reclamation keeps in any case
	otherMax     int64
	otherMaxLine int
	mismatch     int // first line with a mismatch, 0 if none
	lost         int // first unreadable line, 0 if none
	shared       int // first line holding a delta and another frame, 0 if none
	msg          map[int]Block
	capped       bool // rejected by a cap
}

type block struct {
	index    int
	kind     string
	first    int
	firstOff int64
	started  bool
	ended    int // line of the *_end frame, 0 if none
	acc      []byte
	deltas   int
	dBytes   int64
	dMax     int64
	dMaxLine int
	dFirst   int
	dOff     int64
	drop     []Range
	final    *Block
	ok       bool     // the deltas are confirmed: they equal a complete content
	okLine   int      // the line that confirmed them
	sum      [32]byte // digest of the confirmed content
	bad      bool     // a mismatch was reported
}

// Line announces the next physical line of the log. Lines that hold no
// frame (blank, unreadable, oversized) count towards the open stream; an
// unreadable one keeps it from being reclaimed, since what it held is
// unknown.
func (r *Replay) Line(rec *rollout.Record) {
	r.line, r.off, r.size, r.seen = rec.Line, rec.Offset, rec.Size+int64(len(rec.EOL)), 0
	r.end = rec.End()
	r.parts = 1
	switch rec.Shape {
	case rollout.ShapeObject:
		return
	case rollout.ShapeConcatenated:
		r.parts = len(rec.Parts)
		return
	}
	r.parts = 0
	s := r.cur
	if s == nil {
		return
	}
	r.account(s)
	r.keepLine(s)
	if rec.Shape != rollout.ShapeBlank && s.lost == 0 {
		s.lost = rec.Line
	}
}

// account adds the current line to the stream once.
func (r *Replay) account(s *stream) {
	s.Lines++
	s.Bytes += r.size
	s.LastLine = r.line
}

func (r *Replay) keepLine(s *stream) {
	if r.size > s.otherMax {
		s.otherMax, s.otherMaxLine = r.size, r.line
	}
}

// Feed replays one frame (a JSON object) of the line last given to Line.
func (r *Replay) Feed(raw []byte) {
	r.seen++
	first := r.seen == 1
	f := parseFrame(raw)
	assistant := false
	switch f.typ {
	case "message_start", "message_end":
		assistant = role(f.message) == "assistant"
	}
	opens := f.typ == "start" || (f.typ == "message_start" && assistant)
	if f.noType || (!rollout.KnownFrameType(f.typ) && f.phase == "") {
		r.unknownType(f)
	}
	if r.cur != nil {
		switch {
		case opens:
			r.close(r.cur, "", fmt.Sprintf("a new stream starts on line %d", r.line))
		case f.typ == "turn_end" || f.typ == "agent_end":
			r.close(r.cur, "", fmt.Sprintf("%s on line %d came before the stream ended", f.typ, r.line))
		}
	}
	// A block or terminal frame with no stream open (a log that starts
	// mid-stream, or whose opening deltas were reclaimed) opens one.
	ends := f.typ == "done" || f.typ == "error" || (f.typ == "message_end" && assistant)
	if r.cur == nil && (opens || ends || f.phase != "") {
		r.cur = &stream{Stream: Stream{FirstLine: r.line}, firstOff: r.off, blocks: map[int]*block{}}
	}
	s := r.cur
	if s == nil {
		return
	}
	if first {
		r.account(s)
		if f.phase != "delta" || r.parts > 1 {
			r.keepLine(s)
		}
	}
	if r.parts > 1 && f.phase == "delta" && s.shared == 0 {
		s.shared = r.line
	}
	switch {
	case f.phase != "":
		r.blockEvent(s, &f)
	case f.typ == "done":
		r.terminal(s, &f, "done", true)
	case f.typ == "message_end" && assistant:
		stop, _ := jsonString(member(f.message, "stopReason"))
		r.terminal(s, &f, "message_end", stop != "error" && stop != "aborted")
	case f.typ == "error":
		r.terminal(s, &f, "error", false)
	}
}

func role(msg []byte) string {
	if len(msg) == 0 || msg[0] != '{' {
		return ""
	}
	s, _ := jsonString(member(msg, "role"))
	return s
}

func (r *Replay) unknownType(f frame) {
	t := f.typ
	if f.noType {
		t = ""
	}
	u := r.unknown[t]
	if u == nil {
		if len(r.unknown) >= maxUnknownTypes {
			t = "..."
			u = r.unknown[t]
		}
		if u == nil {
			u = &unknownType{line: r.line, off: r.off}
			r.unknown[t] = u
		}
	}
	u.count++
}

func (r *Replay) getBlock(s *stream, f *frame) *block {
	b := s.blocks[f.index]
	if b == nil {
		b = &block{index: f.index, kind: f.kind, first: r.line, firstOff: r.off}
		s.blocks[f.index] = b
	}
	return b
}

func (r *Replay) mismatch(s *stream, b *block, against, reason string) {
	if s.mismatch == 0 {
		s.mismatch = r.line
	}
	if b.bad {
		return
	}
	b.bad = true
	if s.lost != 0 {
		reason += fmt.Sprintf(" (line %d of this stream could not be read)", s.lost)
	}
	r.emit(Event{Kind: DeltaMismatch, Line: r.line, Offset: r.off, Facts: MismatchFacts{
		ContentIndex: b.index, BlockKind: b.kind, Against: against, Reason: reason,
	}})
}

func (r *Replay) blockEvent(s *stream, f *frame) {
	b := r.getBlock(s, f)
	if b.kind != f.kind {
		r.mismatch(s, b, f.typ, fmt.Sprintf("a %s frame for the %s block started on line %d", f.typ, b.kind, b.first))
		return
	}
	switch f.phase {
	case "start":
		if b.started || b.deltas > 0 || b.ended != 0 {
			r.mismatch(s, b, f.typ, fmt.Sprintf("contentIndex %d starts again (first frame on line %d)", b.index, b.first))
		}
		b.started = true
	case "delta":
		d, ok := jsonString(f.delta)
		if !ok {
			r.mismatch(s, b, f.typ, "the delta is not a string")
		}
		if b.ended != 0 {
			r.mismatch(s, b, f.typ, fmt.Sprintf("a delta after the block's %s_end on line %d", b.kind, b.ended))
		}
		b.acc = append(b.acc, d...)
		if b.deltas == 0 {
			b.dFirst, b.dOff = r.line, r.off
		}
		b.deltas++
		if r.seen == 1 && r.parts == 1 {
			b.dBytes += r.size
			if r.size > b.dMax {
				b.dMax, b.dMaxLine = r.size, r.line
			}
			if r.opts.Lines {
				if n := len(b.drop); n > 0 && b.drop[n-1].To == r.line-1 {
					b.drop[n-1].To = r.line
				} else {
					b.drop = append(b.drop, Range{r.line, r.line})
				}
			}
		}
	case "end":
		if b.ended == 0 {
			b.ended = r.line
		}
		val := f.content
		if b.kind == KindToolCall {
			val = nil
			if len(f.tool) > 0 && f.tool[0] == '{' {
				val = member(f.tool, "arguments")
			}
		}
		if val != nil {
			// An end without its content confirms nothing; the terminal
			// message still may.
			r.confirm(s, b, val, f.typ, "end")
		}
	}
}

// confirm compares a block's deltas with a complete content (raw JSON) and
// records the block's final content.
func (r *Replay) confirm(s *stream, b *block, val []byte, against, source string) {
	text, canon, err := decodeContent(b.kind, val)
	if err != nil {
		r.mismatch(s, b, against, fmt.Sprintf("its content is not usable: %v", err))
		return
	}
	got := text
	if b.kind == KindToolCall {
		got = canon
	}
	if b.ok {
		// Confirmed before (a repeated end): the deltas are gone, the
		// digest of what they confirmed remains.
		if sha256.Sum256(got) != b.sum {
			r.mismatch(s, b, against, fmt.Sprintf("the content differs from the one confirmed on line %d", b.okLine))
		}
		return
	}
	if b.deltas > 0 && !b.bad {
		acc := b.acc
		if b.kind == KindToolCall {
			c, err := canonicalJSON(acc)
			if err != nil {
				r.mismatch(s, b, against, fmt.Sprintf("the %d bytes of concatenated deltas are not one JSON value (%v)", len(acc), err))
				return
			}
			acc = c
		}
		if !bytes.Equal(acc, got) {
			r.mismatch(s, b, against, diffReason(b, acc, got, against))
			return
		}
	}
	if b.bad {
		return
	}
	b.ok, b.okLine, b.sum = true, r.line, sha256.Sum256(got)
	if r.opts.content {
		b.final = &Block{Index: b.index, Kind: b.kind, Content: string(got), Source: source}
	}
	b.acc = nil // confirmed: the deltas are no longer needed
}

func diffReason(b *block, got, want []byte, against string) string {
	n := 0
	for n < len(got) && n < len(want) && got[n] == want[n] {
		n++
	}
	what := "concatenated deltas"
	if b.kind == KindToolCall {
		what = "concatenated deltas (as JSON)"
		against += " arguments"
	}
	return fmt.Sprintf("the %d bytes of %s differ from the %d bytes of the %s content from byte %d", len(got), what, len(want), against, n)
}

// decodeContent decodes a complete content: a JSON string for text-like
// blocks, any JSON value (the arguments) for tool calls.
func decodeContent(kind string, val []byte) (text, canon []byte, err error) {
	if kind == KindToolCall {
		canon, err = canonicalJSON(val)
		return nil, canon, err
	}
	s, ok := jsonString(val)
	if !ok {
		return nil, nil, fmt.Errorf("not a string")
	}
	return []byte(s), nil, nil
}

// terminal ends the open stream. A completed message (done, or message_end
// of a message that did not fail) confirms the blocks that have no *_end;
// a failed or aborted one holds what was streamed so far, which is not
// known to be complete.
func (r *Replay) terminal(s *stream, f *frame, kind string, confirms bool) {
	if confirms && len(f.message) > 0 && f.message[0] == '{' {
		if content := member(f.message, "content"); len(content) > 0 && content[0] == '[' {
			i := 0
			rollout.Elements(content, func(start, end int) bool {
				r.messageBlock(s, i, content[start:end], kind)
				i++
				return true
			})
		}
	}
	why := fmt.Sprintf("the stream ended with %s on line %d", kind, r.line)
	if kind != "error" && !confirms {
		why = fmt.Sprintf("the stream failed (%s on line %d)", kind, r.line)
	}
	r.close(s, kind, why)
}

func (r *Replay) messageBlock(s *stream, i int, elem []byte, against string) {
	if len(elem) == 0 || elem[0] != '{' {
		return
	}
	t, _ := jsonString(member(elem, "type"))
	kind := messageKind(t)
	b := s.blocks[i]
	val, ok := contentValue(kind, elem)
	if b != nil && !b.ok && !b.bad {
		switch {
		case b.kind != kind:
			r.mismatch(s, b, against, fmt.Sprintf("the message's content %d is a %q, not a %s block", i, t, b.kind))
		case ok:
			r.confirm(s, b, val, against, "message")
		}
		return
	}
	if b == nil && r.opts.content {
		// Content that was never streamed (or whose frames were dropped):
		// the message alone carries it.
		if s.msg == nil {
			s.msg = map[int]Block{}
		}
		blk := Block{Index: i, Kind: kind, Content: string(elem), Source: "message"}
		if ok {
			if text, canon, err := decodeContent(kind, val); err == nil {
				blk.Content = string(text)
				if kind == KindToolCall {
					blk.Content = string(canon)
				}
			}
		}
		s.msg[i] = blk
	}
}

// close ends a stream: it reports the blocks whose deltas never ended and
// decides what reclamation does with the stream.
func (r *Replay) close(s *stream, terminal, why string) {
	r.cur = nil
	s.Terminal = terminal
	idx := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var drop []Range
	keptMax, keptMaxLine := s.otherMax, s.otherMaxLine
	firstDrop, firstOff := 0, int64(0)
	for _, i := range idx {
		b := s.blocks[i]
		if b.ok && !b.bad && b.deltas > 0 {
			s.DropFrames += b.deltas
			s.DropBytes += b.dBytes
			drop = append(drop, b.drop...)
			if firstDrop == 0 || b.dFirst < firstDrop {
				firstDrop, firstOff = b.dFirst, b.dOff
			}
			continue
		}
		if b.dMax > keptMax {
			keptMax, keptMaxLine = b.dMax, b.dMaxLine
		}
		if b.ended == 0 && !b.ok && !b.bad && b.deltas > 0 {
			r.emit(Event{Kind: Unterminated, Line: b.first, Offset: b.firstOff, Facts: UnterminatedFacts{
				ContentIndex: b.index, BlockKind: b.kind, Deltas: b.deltas, DeltaBytes: len(b.acc), Reason: why,
			}})
		}
	}
	switch {
	case s.DropFrames == 0:
		s.Status = NothingSuperseded
	case s.mismatch != 0:
		s.reject(fmt.Sprintf("line %d: deltas differ from their content (frames/delta-mismatch)", s.mismatch))
	case s.lost != 0:
		s.reject(fmt.Sprintf("line %d of the stream could not be read", s.lost))
	case s.shared != 0:
		s.reject(fmt.Sprintf("line %d holds a delta and another frame (split it first: --fix line/concatenated)", s.shared))
	case keptMax > r.opts.MaxBytes:
		s.capped = true
		s.reject(fmt.Sprintf("the frame on line %d is %d bytes, over the byte cap of %d: rejected whole, never split", keptMaxLine, keptMax, r.opts.MaxBytes))
	case s.Bytes-s.DropBytes > r.opts.MaxBytes:
		s.capped = true
		s.reject(fmt.Sprintf("the reclaimed stream would still be %d bytes, over the byte cap of %d", s.Bytes-s.DropBytes, r.opts.MaxBytes))
	case s.Lines-s.DropFrames > r.opts.MaxFrames:
		s.capped = true
		s.reject(fmt.Sprintf("the reclaimed stream would still hold %d frames, over the cap of %d", s.Lines-s.DropFrames, r.opts.MaxFrames))
	default:
		s.Status = Reclaimed
		if r.opts.Lines {
			s.Drop = mergeRanges(drop)
		}
	}
	switch s.Status {
	case Reclaimed:
		if r.opts.Lines {
			r.emit(Event{Kind: Reclaim, Line: s.FirstLine, Offset: s.firstOff, Facts: ReclaimFacts{
				Drop: s.Drop, Frames: s.DropFrames, Bytes: s.DropBytes, LastLine: s.LastLine,
			}})
		}
		r.tot.streams++
		r.tot.frames += s.DropFrames
		r.tot.bytes += s.DropBytes
		if r.tot.firstLine == 0 {
			r.tot.firstLine, r.tot.firstOff = firstDrop, firstOff
		}
	case Rejected:
		r.tot.rejected++
		r.tot.rejectedBytes += s.DropBytes
		if s.capped {
			r.tot.capped++
		}
		if s.capped && r.tot.firstRejLine == 0 {
			r.tot.firstRejLine, r.tot.firstRejOff = s.FirstLine, s.firstOff
		}
	}
	if r.onStream == nil {
		return
	}
	if r.opts.content {
		for _, i := range idx {
			b := s.blocks[i]
			switch {
			case b.final != nil:
				s.Blocks = append(s.Blocks, *b.final)
			default:
				src := "deltas"
				if b.deltas == 0 {
					src = "start"
				}
				s.Blocks = append(s.Blocks, Block{Index: b.index, Kind: b.kind, Content: string(b.acc), Source: src})
			}
		}
		for _, m := range s.msg {
			s.Blocks = append(s.Blocks, m)
		}
		sort.Slice(s.Blocks, func(i, j int) bool { return s.Blocks[i].Index < s.Blocks[j].Index })
	}
	out := s.Stream
	r.onStream(&out)
}

func (s *stream) reject(reason string) {
	s.Status, s.Reason = Rejected, reason
}

func mergeRanges(rs []Range) []Range {
	sort.Slice(rs, func(i, j int) bool { return rs[i].From < rs[j].From })
	var out []Range
	for _, x := range rs {
		if n := len(out); n > 0 && x.From <= out[n-1].To+1 {
			out[n-1].To = max(out[n-1].To, x.To)
			continue
		}
		out = append(out, x)
	}
	return out
}

// Finish ends the replay: it closes a stream still open at the end of the
// log and reports the per-log facts.
func (r *Replay) Finish() {
	if r.cur != nil {
		r.close(r.cur, "", "the log ends before the stream does")
	}
	t := r.tot
	if t.frames > 0 || t.capped > 0 {
		line, off := t.firstLine, t.firstOff
		if line == 0 {
			line, off = t.firstRejLine, t.firstRejOff
		}
		ratio := 0.0
		if r.end > 0 {
			ratio = math.Round(1e4*float64(t.bytes)/float64(r.end)) / 1e4
		}
		r.emit(Event{Kind: SupersededBytes, Line: line, Offset: off, Facts: SupersededFacts{
			Bytes: t.bytes, Frames: t.frames, Streams: t.streams, LogBytes: r.end,
			Ratio: ratio, RejectedStreams: t.rejected, RejectedBytes: t.rejectedBytes,
		}})
	}
	types := make([]string, 0, len(r.unknown))
	for t := range r.unknown {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return r.unknown[types[i]].line < r.unknown[types[j]].line })
	for _, t := range types {
		u := r.unknown[t]
		r.emit(Event{Kind: UnknownType, Line: u.line, Offset: u.off, Facts: UnknownTypeFacts{Type: t, Count: u.count}})
	}
}

// LogBytes is the number of bytes read so far.
func (r *Replay) LogBytes() int64 { return r.end }

// Idle reports whether r holds no stream and no unknown frame type: all
// it keeps is where the last line was (a replay of an envelope rollout).
func (r *Replay) Idle() bool { return r.cur == nil && len(r.unknown) == 0 && r.tot == (totals{}) }

// Clone is a copy of an Idle replay (nil otherwise) that reports to the
// same emit function until SetEmit.
func (r *Replay) Clone() *Replay {
	if !r.Idle() {
		return nil
	}
	c := *r
	c.unknown = map[string]*unknownType{}
	return &c
}

// SetEmit makes r report to emit.
func (r *Replay) SetEmit(emit func(Event)) { r.emit = emit }
