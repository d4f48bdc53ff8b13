package frames

// Test helpers for the external tests: a whole-log reclamation plan
// (Plan), its proof (Check, Contents) and its application (Apply). The
// commands reclaim through the engine (FlowFramesReclaim), checks' fix
// planner and rollout.Rewrite; these check the replay's decisions in
// isolation.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/rollout-dev/rollout/rollout"
)

// Reclamation is the plan for one frame log: per stream, the superseded
// delta frames to drop. Streams are all-or-nothing: a stream is either
// rewritten whole (every superseded delta dropped) or left byte for byte.
type Reclamation struct {
	Streams []Stream // every stream, in log order (Blocks empty)
	// Drop lists the lines to drop, sorted and merged. Only *_delta frames
	// (bare, or the message_update line wrapping one) are ever listed.
	Drop []Range

	Lines       int   // physical lines of the log
	BytesBefore int64 // the log's size
	BytesAfter  int64 // its size once the dropped lines are gone
	Frames      int   // dropped frames
}

// Dropped reports whether reclamation drops a line.
func (p *Reclamation) Dropped(line int) bool {
	i := sort.Search(len(p.Drop), func(i int) bool { return p.Drop[i].To >= line })
	return i < len(p.Drop) && p.Drop[i].From <= line
}

// Summary counts the streams by status.
func (p *Reclamation) Summary() (reclaimed, rejected, untouched int) {
	for _, s := range p.Streams {
		switch s.Status {
		case Reclaimed:
			reclaimed++
		case Rejected:
			rejected++
		default:
			untouched++
		}
	}
	return
}

// Plan reads a frame log and decides which lines reclamation drops. It
// holds the open stream's delta text and the list of dropped line ranges,
// never the log.
func Plan(r io.Reader, maxLine int64, opts Options) (*Reclamation, error) {
	opts.Lines, opts.content = true, false
	p := &Reclamation{}
	rp := NewReplay(opts, nil)
	rp.OnStream(func(s *Stream) {
		p.Drop = append(p.Drop, s.Drop...)
		p.Frames += len0(s)
		p.Streams = append(p.Streams, *s)
	})
	lines, err := feed(r, maxLine, func(rec *rollout.Record) { rp.Line(rec) }, rp.Feed)
	if err != nil {
		return nil, err
	}
	rp.Finish()
	p.Lines = lines
	p.BytesBefore = rp.LogBytes()
	p.BytesAfter = p.BytesBefore
	for _, s := range p.Streams {
		if s.Status == Reclaimed {
			p.BytesAfter -= s.DropBytes
		}
	}
	p.Drop = mergeRanges(p.Drop)
	return p, nil
}

func len0(s *Stream) int {
	if s.Status != Reclaimed {
		return 0
	}
	return s.DropFrames
}

// feed reads records and hands every line to line and every frame to frame,
// splitting concatenated lines as the engine does.
func feed(r io.Reader, maxLine int64, line func(*rollout.Record), frame func([]byte)) (int, error) {
	rd := rollout.NewReader(r, maxLine)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd.Line(), nil
		}
		if err != nil {
			return 0, err
		}
		line(rec)
		switch rec.Shape {
		case rollout.ShapeObject:
			frame(rec.Raw)
		case rollout.ShapeConcatenated:
			for _, part := range rec.Parts {
				frame(rec.Raw[part[0]:part[1]])
			}
		}
	}
}

// Contents replays a log and returns every stream with its final content.
// keep, when not nil, selects the lines replayed (the others are treated as
// absent, as if a rewrite had dropped them). Tests and Check use it; it
// holds each stream's content, so it is not meant for production paths.
func Contents(r io.Reader, maxLine int64, keep func(line int) bool) ([]Stream, error) {
	var out []Stream
	rp := NewReplay(Options{content: true}, nil)
	rp.OnStream(func(s *Stream) { out = append(out, *s) })
	skip := false
	_, err := feed(r, maxLine, func(rec *rollout.Record) {
		skip = keep != nil && !keep(rec.Line)
		if !skip {
			rp.Line(rec)
		}
	}, func(raw []byte) {
		if !skip {
			rp.Feed(raw)
		}
	})
	if err != nil {
		return nil, err
	}
	rp.Finish()
	return out, nil
}

// Check proves a plan in one streaming pass: it replays the whole log and,
// side by side, only the lines the plan keeps, and fails unless every
// stream ends with the same final content (every block's index, kind,
// content and source) in both. Memory is one stream's content per side.
func Check(r io.Reader, maxLine int64, p *Reclamation) error {
	var orig []Stream
	var err error
	compared := 0
	full := NewReplay(Options{content: true}, nil)
	full.OnStream(func(s *Stream) { orig = append(orig, *s) })
	kept := NewReplay(Options{content: true}, nil)
	kept.OnStream(func(s *Stream) {
		if err != nil {
			return
		}
		if len(orig) == 0 {
			err = fmt.Errorf("the kept lines hold a stream ending on line %d that the log does not", s.LastLine)
			return
		}
		want := orig[0]
		orig = orig[1:]
		compared++
		err = sameContent(&want, s)
	})
	skip := false
	_, rerr := feed(r, maxLine, func(rec *rollout.Record) {
		full.Line(rec)
		skip = p.Dropped(rec.Line)
		if !skip {
			kept.Line(rec)
		}
	}, func(raw []byte) {
		full.Feed(raw)
		if !skip {
			kept.Feed(raw)
		}
	})
	if rerr != nil {
		return rerr
	}
	full.Finish()
	kept.Finish()
	if err != nil {
		return err
	}
	if len(orig) > 0 {
		return fmt.Errorf("the stream ending on line %d is missing from the kept lines", orig[0].LastLine)
	}
	if compared != len(p.Streams) {
		return fmt.Errorf("replayed %d streams, the plan has %d", compared, len(p.Streams))
	}
	return nil
}

func sameContent(want, got *Stream) error {
	// Streams are matched by their last line and terminal frame, which are
	// always kept; the first line moves when a log starts mid-stream with
	// deltas that are dropped.
	if want.LastLine != got.LastLine || want.Terminal != got.Terminal {
		return fmt.Errorf("stream ending on line %d (by %q) replays as a stream ending on line %d (by %q)",
			want.LastLine, want.Terminal, got.LastLine, got.Terminal)
	}
	if len(want.Blocks) != len(got.Blocks) {
		return fmt.Errorf("stream ending on line %d: %d blocks, %d after reclamation", want.LastLine, len(want.Blocks), len(got.Blocks))
	}
	for i := range want.Blocks {
		if want.Blocks[i] != got.Blocks[i] {
			w, g := want.Blocks[i], got.Blocks[i]
			return fmt.Errorf("stream ending on line %d, block %d: %s from %s (%d bytes) becomes %s from %s (%d bytes)",
				want.LastLine, w.Index, w.Kind, w.Source, len(w.Content), g.Kind, g.Source, len(g.Content))
		}
	}
	return nil
}

// Apply copies a log to w without the lines the plan drops. Every other
// line is copied byte for byte, whatever its length or content; nothing is
// re-encoded. It returns the bytes written.
func Apply(r io.Reader, w io.Writer, p *Reclamation) (int64, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	line, written := 1, int64(0)
	drop := false
	atStart := true
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if atStart {
				drop = p.Dropped(line)
			}
			if !drop {
				n, werr := w.Write(chunk)
				written += int64(n)
				if werr != nil {
					return written, werr
				}
			}
			atStart = chunk[len(chunk)-1] == '\n'
			if atStart {
				line++
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return written, nil
		default:
			return written, err
		}
	}
}
