package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress draws "verifying 2/5 files, 80.0 of 201.1 MB (39%)" on stderr
// when it is a terminal. It counts bytes as stored, so one big file shows
// progress too.
type progress struct {
	mu      sync.Mutex
	io      *IO
	verb    string // "verifying", "reading"
	files   int
	done    int
	total   int64 // bytes of all files (0: unknown, standard input)
	read    int64
	last    time.Time
	enabled bool
	shown   bool // a progress line is on the terminal
	now     func() time.Time
}

// progressMinBytes: a single file smaller than this is verified before a
// progress line would be worth reading.
const progressMinBytes = 32 << 20

func newProgress(io *IO, verb string, paths []string, enabled bool) *progress {
	p := &progress{io: io, verb: verb, files: len(paths), now: time.Now}
	for _, path := range paths {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			p.total += fi.Size()
		}
	}
	p.enabled = enabled && (len(paths) > 1 || p.total >= progressMinBytes)
	return p
}

// add counts bytes read; it redraws at most every 100ms.
func (p *progress) add(n int) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.read += int64(n)
	if t := p.now(); t.Sub(p.last) >= 100*time.Millisecond {
		p.last = t
		p.draw()
	}
}

func (p *progress) step() {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.draw()
}

func (p *progress) draw() {
	line := fmt.Sprintf("%s %d/%d files", p.verb, p.done, p.files)
	if p.total > 0 {
		read := min(p.read, p.total)
		line += fmt.Sprintf(", %.1f of %.1f MB (%d%%)", float64(read)/1e6, float64(p.total)/1e6, read*100/p.total)
	}
	fmt.Fprintf(p.io.Err, "\r%s\033[K", line)
	p.shown = true
}

// clear erases the progress line; the caller holds p.mu.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprintf(p.io.Err, "\r\033[K")
		p.shown = false
	}
}

// writer returns w, or with the progress line shown a writer that clears
// the line before each write, so that a report streamed to the terminal
// does not mix with it (the next update draws it again).
func (p *progress) writer(w io.Writer) io.Writer {
	if !p.enabled {
		return w
	}
	return progressClearing{p, w}
}

type progressClearing struct {
	p *progress
	w io.Writer
}

func (c progressClearing) Write(b []byte) (int, error) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.clear()
	return c.w.Write(b)
}

func (p *progress) finish() {
	if p.enabled {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.io.Err, "\r\033[K")
		p.shown = false
	}
}
