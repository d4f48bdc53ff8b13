package main

import (
	"fmt"
	"sync"
)

// progress draws "verifying N/M files" on stderr when it is a terminal.
type progress struct {
	mu      sync.Mutex
	io      *IO
	total   int
	n       int
	enabled bool
}

func newProgress(io *IO, total int, enabled bool) *progress {
	return &progress{io: io, total: total, enabled: enabled && total > 1}
}

func (p *progress) step() {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.io.Err, "\rverifying %d/%d files", p.n, p.total)
}

func (p *progress) done() {
	if p.enabled {
		fmt.Fprintf(p.io.Err, "\r\033[K")
	}
}
