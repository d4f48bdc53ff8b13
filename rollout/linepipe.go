package rollout

import (
	"errors"
	"io"
	"sync"
)

// LinePipe connects a Rewrite to a Reader in the same process, as io.Pipe
// does, except that Rewrite hands it long lines whole (WriteLine): the
// Reader then uses the writer's line as its record instead of copying it
// in pieces and joining them. repair verifies its output this way while
// writing it, so a 60 MB line is held once, not three times.
//
// Write and WriteLine block until the reader is done with what they gave:
// the bytes read, the line's record replaced by the next one.
type LinePipe struct {
	mu      sync.Mutex
	cond    sync.Cond
	data    []byte // what Write gave and the reader has not read yet
	line    []byte // a whole line WriteLine gave, waiting for the reader
	eol     string
	hasLine bool
	taken   bool  // the reader holds the line
	drained bool  // the reader is gone: writes succeed at once
	werr    error // the writer closed: io.EOF or its error
}

// NewLinePipe returns an open pipe.
func NewLinePipe() *LinePipe {
	p := &LinePipe{}
	p.cond.L = &p.mu
	return p
}

// errWholeLine tells the line reader that a whole line is next.
var errWholeLine = errors.New("a whole line is next")

// Write gives p to the reader and returns once it has read all of it.
func (p *LinePipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waitIdle()
	if p.drained || len(b) == 0 {
		return len(b), nil
	}
	p.data = b
	p.cond.Broadcast()
	for len(p.data) > 0 && !p.drained {
		p.cond.Wait()
	}
	p.data = nil
	return len(b), nil
}

// WriteLine gives the reader one whole line, body then terminator, and
// returns once the reader is done with it.
func (p *LinePipe) WriteLine(body []byte, eol string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waitIdle()
	if p.drained {
		return nil
	}
	p.line, p.eol, p.hasLine = body, eol, true
	p.cond.Broadcast()
	for (p.hasLine || p.taken) && !p.drained {
		p.cond.Wait()
	}
	p.line = nil
	return nil
}

// waitIdle waits until the reader has finished with the previous write.
func (p *LinePipe) waitIdle() {
	for (len(p.data) > 0 || p.hasLine || p.taken) && !p.drained {
		p.cond.Wait()
	}
}

// CloseWithError ends the stream: the reader gets err after what was
// written, or io.EOF when err is nil.
func (p *LinePipe) CloseWithError(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	p.werr = err
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Read reads the bytes written. Reading again is also how the reader says
// it is done with the whole line it took.
func (p *LinePipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.release()
	for len(p.data) == 0 && !p.hasLine && p.werr == nil {
		p.cond.Wait()
	}
	switch {
	case len(p.data) > 0:
		n := copy(b, p.data)
		p.data = p.data[n:]
		if len(p.data) == 0 {
			p.cond.Broadcast()
		}
		return n, nil
	case p.hasLine:
		return 0, errWholeLine
	}
	return 0, p.werr
}

// takeLine hands the reader the waiting whole line, which stays the
// writer's until the reader reads again.
func (p *LinePipe) takeLine() (body []byte, eol string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasLine {
		return nil, "", false
	}
	p.hasLine, p.taken = false, true
	return p.line, p.eol, true
}

func (p *LinePipe) release() {
	if p.taken {
		p.taken = false
		p.cond.Broadcast()
	}
}

// Drain is called by a reader that stops reading: the writer never
// blocks again and what it writes is dropped.
func (p *LinePipe) Drain() {
	p.mu.Lock()
	p.drained, p.taken, p.hasLine, p.data = true, false, false, nil
	p.cond.Broadcast()
	p.mu.Unlock()
}

// LineWriter is a Rewrite destination that takes long lines whole.
type LineWriter interface {
	io.Writer
	WriteLine(body []byte, eol string) error
}
