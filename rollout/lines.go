package rollout

import (
	"bufio"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"strings"
	"sync"
	"weak"
)

// This file reads lines for Reader and the rewriter. A line that fits the
// bufio buffer is returned in place. A longer one (an inline image, a tool
// output of tens of MB) is copied into the last long line's buffer (or the
// spare one) while it fits: read once. Past that, when the stream can be
// read again by offset (a plain file), the line is scanned to learn its
// length and read again into a buffer of that size, checked against what
// the scan saw; otherwise its pieces are copied as they come and joined
// once. Growing a buffer by append instead cost about three times the line
// at the peak.

// Rereadable is a stream that can read its own bytes again by their offset
// in the stream (0: its first byte). Rereader returns nil when it cannot (a
// pipe, a decompressed stream).
type Rereadable interface {
	Rereader() io.ReaderAt
}

// RereaderOf returns a ReaderAt over r's stream offsets, or nil: r's own
// Rereader, or for a regular *os.File a view from its current position
// (call it before anything is read from r).
func RereaderOf(r io.Reader) io.ReaderAt {
	switch v := r.(type) {
	case Rereadable:
		return v.Rereader()
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		base, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil
		}
		return &fileAt{v, base}
	}
	return nil
}

type fileAt struct {
	f    *os.File
	base int64
}

func (a *fileAt) ReadAt(p []byte, off int64) (int, error) { return a.f.ReadAt(p, a.base+off) }

// ErrLineChanged is a long line whose bytes differed when read again: the
// file was modified in place while being read.
var ErrLineChanged = errors.New("the line changed while it was being read")

// lineSource splits a stream into lines.
type lineSource struct {
	br     *bufio.Reader
	at     io.ReaderAt // nil: the stream cannot be read again
	off    int64       // stream offset of the next line
	buf    []byte      // the last long line, reused when the next one fits
	chunks [][]byte    // pieces of a long line, when it cannot be read again
	seed   maphash.Seed
	feed   *LinePipe // hands long lines whole
}

// lineRead is one line as read.
type lineRead struct {
	line       []byte  // the line with its terminator (without: whole); nil when oversized
	eol        string  // whole: the terminator
	whole      bool    // handed whole by a LinePipe
	size       int64   // bytes read, terminator included
	tail       [2]byte // the last two bytes read ("\r\n" on an oversized line)
	terminated bool    // ends with "\n"
	oversized  bool    // over the limit: not kept
}

// next reads one line; at the end of the stream size is 0. The line is
// valid until the next call. A line over limit bytes (terminator included)
// is not kept: it is oversized, and pass, when set, receives its bytes in
// order as they are read (to copy them verbatim). A read error is returned
// as it is.
func (s *lineSource) next(limit int64, pass func([]byte) error) (lineRead, error) {
	var r lineRead
	start := s.off
	var scan maphash.Hash // what the scan saw of a line read again
	if s.at != nil {
		if s.seed == (maphash.Seed{}) {
			s.seed = maphash.MakeSeed()
		}
		scan.SetSeed(s.seed)
	}
	defer func() { clear(s.chunks); s.chunks = s.chunks[:0] }()
	// acc holds a long line while it fits a buffer at hand (the last long
	// line's, or the spare one): read once. Past that, a stream that can
	// be read again is scanned (hashed) to learn the line's length and
	// read again into a buffer of that size; one that cannot keeps pieces.
	var acc []byte
	spared, hashing := false, false
	for first := true; ; first = false {
		chunk, err := s.br.ReadSlice('\n')
		if errors.Is(err, errWholeLine) {
			if !first || len(chunk) > 0 {
				return r, errors.New("rollout: a LinePipe gave a whole line inside a line")
			}
			body, eol, _ := s.feed.takeLine()
			return s.whole(body, eol, limit, pass)
		}
		r.size += int64(len(chunk))
		for _, b := range chunk[max(len(chunk)-2, 0):] {
			r.tail[0], r.tail[1] = r.tail[1], b
		}
		if first && errors.Is(err, bufio.ErrBufferFull) {
			if acc = s.buf[:0]; cap(acc) == 0 {
				acc, spared = takeSpare(), true
			}
		}
		switch {
		case r.oversized:
			if pass != nil {
				if err := pass(chunk); err != nil {
					return r, err
				}
			}
		case r.size > limit:
			r.oversized = true
			if len(s.chunks) == 0 && len(acc) > 0 {
				s.chunks = append(s.chunks, acc) // what was held back
			}
			if pass != nil {
				if err := s.passHeld(start, r.size-int64(len(chunk)), hashing, &scan, pass); err != nil {
					return r, err
				}
				if err := pass(chunk); err != nil {
					return r, err
				}
			}
			clear(s.chunks)
		case first && !errors.Is(err, bufio.ErrBufferFull):
			r.line = chunk // in bufio's buffer, valid until the next read
		case !hashing && len(s.chunks) == 0 && len(acc)+len(chunk) <= cap(acc):
			// Into the last long line's buffer, or the spare one: a line
			// read again (repair's passes) takes no new memory.
			acc = append(acc, chunk...)
		case s.at != nil:
			if !hashing {
				hashing = true
				scan.Write(acc)
				if spared {
					spare(acc)
				}
				acc = nil
			}
			scan.Write(chunk)
		default:
			if len(s.chunks) == 0 && len(acc) > 0 {
				s.chunks = append(s.chunks, acc)
			}
			s.chunks = append(s.chunks, append([]byte(nil), chunk...))
		}
		if err == nil {
			r.terminated = true
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		return r, err
	}
	s.off += r.size
	if r.oversized || r.line != nil || r.size == 0 {
		return r, nil
	}
	if !hashing && len(s.chunks) == 0 {
		s.buf = acc
		r.line = acc
		return r, nil
	}
	line := s.buffer(int(r.size))
	if !hashing {
		i := 0
		for _, c := range s.chunks {
			i += copy(line[i:], c)
		}
	} else if err := s.reread(line, start, &scan); err != nil {
		return r, err
	}
	r.line = line
	return r, nil
}

// whole returns a line a LinePipe handed whole.
func (s *lineSource) whole(body []byte, eol string, limit int64, pass func([]byte) error) (lineRead, error) {
	r := lineRead{size: int64(len(body) + len(eol)), terminated: strings.HasSuffix(eol, "\n")}
	for _, b := range append(body[max(len(body)-2, 0):len(body):len(body)], eol...) {
		r.tail[0], r.tail[1] = r.tail[1], b
	}
	s.off += r.size
	if r.size > limit {
		r.oversized = true
		if pass != nil {
			if err := pass(body); err != nil {
				return r, err
			}
			return r, pass([]byte(eol))
		}
		return r, nil
	}
	r.line, r.eol, r.whole = body, eol, true
	return r, nil
}

// split splits a line read into its body and terminator (as SplitEOL).
func (r *lineRead) split() (body []byte, eol string) {
	if !r.whole {
		return SplitEOL(r.line)
	}
	body, eol = r.line, r.eol
	if strings.HasSuffix(eol, "\n") {
		i := len(body)
		for i > 0 && body[i-1] == '\r' {
			i--
		}
		if i < len(body) {
			body, eol = body[:i], string(body[i:])+eol
		}
	}
	return body, eol
}

// reread reads line again at off and checks it is what the scan saw.
func (s *lineSource) reread(line []byte, off int64, scan *maphash.Hash) error {
	if _, err := s.at.ReadAt(line, off); err != nil {
		if errors.Is(err, io.EOF) {
			return ErrLineChanged // the file was truncated
		}
		return err
	}
	if maphash.Bytes(s.seed, line) != scan.Sum64() {
		return ErrLineChanged
	}
	return nil
}

// passHeld hands pass the first n bytes of the line at start: held in
// s.chunks, or (hashed) read again.
func (s *lineSource) passHeld(start, n int64, hashed bool, scan *maphash.Hash, pass func([]byte) error) error {
	if !hashed {
		for _, c := range s.chunks {
			if err := pass(c); err != nil {
				return err
			}
		}
		return nil
	}
	var again maphash.Hash
	again.SetSeed(s.seed)
	piece := make([]byte, min(n, 1<<20))
	for done := int64(0); done < n; {
		p := piece[:min(int64(len(piece)), n-done)]
		if _, err := s.at.ReadAt(p, start+done); err != nil {
			if errors.Is(err, io.EOF) {
				return ErrLineChanged
			}
			return err
		}
		again.Write(p)
		if err := pass(p); err != nil {
			return err
		}
		done += int64(len(p))
	}
	if again.Sum64() != scan.Sum64() {
		return fmt.Errorf("%w (copied verbatim)", ErrLineChanged)
	}
	return nil
}

// spareLong are the long-line buffers last let go of, until the collector
// takes them (a weak pointer does not keep one). repair reads a long line
// three times (analysis, rewrite, verification of the result) and edits
// it, and the collector need not run in between: without them each would
// take fresh memory for the line. There are as many as readers that run
// at once (verify --jobs 2 with one spare faulted in a new buffer for
// every other file: 3,000 page faults and 40 % more CPU on files of
// images). sync.Pool does not fit: an item put on one P is not found from
// another.
var spareLong struct {
	mu sync.Mutex
	p  [4]weak.Pointer[[]byte]
}

// longBuffer returns an empty buffer with room for n bytes: the smallest
// spare that is big enough, else a new one rounded up to a MiB (the next
// long line, often of about the same size, may fit it).
func longBuffer(n int) []byte {
	if b := takeSpareWith(func(have, best int) bool { return have >= n && (best < 0 || have < best) }); b != nil {
		return b
	}
	const round = 1 << 20
	return make([]byte, 0, (n+round-1)/round*round)
}

// takeSpare returns the biggest spare buffer, empty (nil when there is none).
func takeSpare() []byte {
	return takeSpareWith(func(have, best int) bool { return have > best })
}

// takeSpareWith takes the spare that better says is better than the best
// so far (best is -1 before any), emptied.
func takeSpareWith(better func(have, best int) bool) []byte {
	spareLong.mu.Lock()
	defer spareLong.mu.Unlock()
	pick, best := -1, -1
	var out *[]byte
	for i := range spareLong.p {
		if b := spareLong.p[i].Value(); b != nil && better(cap(*b), best) {
			pick, best, out = i, cap(*b), b
		}
	}
	if pick < 0 {
		return nil
	}
	spareLong.p[pick] = weak.Pointer[[]byte]{}
	return (*out)[:0]
}

// spare lets b go, for a later longBuffer to take while the collector has
// not: into a free place, else in place of a smaller spare.
func spare(b []byte) {
	if cap(b) == 0 {
		return
	}
	h := new([]byte) // its own object: the weak pointer must hold nothing else
	*h = b
	spareLong.mu.Lock()
	defer spareLong.mu.Unlock()
	slot, smallest := -1, cap(b)
	for i := range spareLong.p {
		old := spareLong.p[i].Value()
		if old == nil {
			slot = i
			break
		}
		if cap(*old) < smallest {
			slot, smallest = i, cap(*old)
		}
	}
	if slot >= 0 {
		spareLong.p[slot] = weak.Make(h)
	}
}

// buffer returns a buffer of n bytes: the last one when it is big enough,
// else a longBuffer.
func (s *lineSource) buffer(n int) []byte {
	if cap(s.buf) < n {
		s.buf = nil
		s.buf = longBuffer(n)
	}
	return s.buf[:n]
}

// release drops the buffers, passing a long one on.
func (s *lineSource) release() {
	spare(s.buf)
	s.br, s.at, s.buf, s.chunks = nil, nil, nil, nil
}
