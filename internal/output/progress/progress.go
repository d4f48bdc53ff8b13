// Package progress draws the one progress line of every long-running
// command on standard error. It is presentation (the output stage): the
// commands feed it bytes and files as they read them.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/output/report"
)

// Line is the one progress line of every long-running command (verify,
// space, reclaim, simulate-budget over many rollouts, repair of many
// files): "verifying 2/5 files, 80.0 MiB of 201.1 MiB (39%), 52.1 MiB/s,
// ETA 2s" on stderr, redrawn in place. It shows only when stderr is a
// terminal and --quiet is not given (the caller decides: enabled), and
// only for a run worth it: several files, or one of minBytes. It
// counts bytes as stored, so one big file shows progress too; the rate
// and the ETA follow the bytes (the files, when the size is unknown).
type Line struct {
	mu      sync.Mutex
	w       io.Writer
	verb    string // "verifying", "reading"
	files   int    // 0: the command cannot count its files, bytes only
	done    int
	total   int64 // bytes of all files (0: unknown, standard input)
	read    int64
	start   time.Time // of the first count
	last    time.Time
	enabled bool
	shown   bool // a progress line is on the terminal
	now     func() time.Time
}

// minBytes: a single file smaller than this is read before a
// progress line would be worth reading.
const minBytes = 32 << 20

// New starts the progress of a run over paths; enabled is the
// caller's "stderr is a terminal and no --quiet".
func New(w io.Writer, verb string, paths []string, enabled bool) *Line {
	p := &Line{w: w, verb: verb, files: len(paths), now: time.Now}
	if !enabled {
		return p // nothing is drawn: no file to stat
	}
	for _, path := range paths {
		if o, ok := objstore.Pinned(path); ok {
			p.total += o.Size // a listing or manifest knew it: no request
		} else if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			p.total += fi.Size()
		}
	}
	p.enabled = enabled && (len(paths) > 1 || p.total >= minBytes)
	return p
}

// Add counts bytes read; it redraws at most every 100ms.
func (p *Line) Add(n int) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	p.begin(t)
	p.read += int64(n)
	if t.Sub(p.last) >= 100*time.Millisecond {
		p.last = t
		p.draw(t)
	}
}

// Step counts a file done.
func (p *Line) Step() {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	p.begin(t)
	p.done++
	p.draw(t)
}

// StepFile counts the file at path done, its size read: a stat only when
// the line is drawn (reclaim's callbacks stat'ed each file of a home for
// nothing).
func (p *Line) StepFile(path string) {
	if !p.enabled {
		return
	}
	if fi, err := os.Stat(path); err == nil {
		p.Add(int(fi.Size()))
	}
	p.Step()
}

func (p *Line) begin(t time.Time) {
	if p.start.IsZero() {
		p.start = t
	}
}

func (p *Line) draw(t time.Time) {
	line := p.verb
	if p.files > 0 {
		line += fmt.Sprintf(" %d/%d files", p.done, p.files)
	}
	var left float64 = -1 // the fraction still to do, when known
	if p.total > 0 {
		read := min(p.read, p.total)
		if p.files > 0 {
			line += ","
		}
		line += fmt.Sprintf(" %s of %s (%d%%)", report.Size(read), report.Size(p.total), read*100/p.total)
		left = float64(p.total-read) / float64(p.total)
	} else if p.files > 0 {
		left = float64(p.files-p.done) / float64(p.files)
	}
	// The rate and the ETA once a second of the run has gone by.
	if el := t.Sub(p.start); el >= time.Second {
		if p.total > 0 {
			line += fmt.Sprintf(", %s/s", report.Size(int64(float64(min(p.read, p.total))/el.Seconds())))
		}
		if done := 1 - left; left >= 0 && done > 0 {
			line += ", ETA " + eta(time.Duration(float64(el)*left/done))
		}
	}
	fmt.Fprintf(p.w, "\r%s\033[K", line)
	p.shown = true
}

// eta writes a remaining time as 45s, 3m05s or 2h10m.
func eta(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// clear erases the progress line; the caller holds p.mu.
func (p *Line) clear() {
	if p.shown {
		fmt.Fprintf(p.w, "\r\033[K")
		p.shown = false
	}
}

// Writer returns w, or with the progress line shown a writer that clears
// the line before each write, so that output streamed to the terminal
// does not mix with it (the next update draws it again).
func (p *Line) Writer(w io.Writer) io.Writer {
	if !p.enabled {
		return w
	}
	return clearing{p, w}
}

type clearing struct {
	p *Line
	w io.Writer
}

func (c clearing) Write(b []byte) (int, error) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.clear()
	return c.w.Write(b)
}

// Finish erases the line for good.
func (p *Line) Finish() {
	if p.enabled {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.w, "\r\033[K")
		p.shown = false
	}
}

// Enabled reports whether the line is drawn.
func (p *Line) Enabled() bool { return p.enabled }

// CountBytesOnly draws bytes, not files: for a command that cannot tell
// when a file is done.
func (p *Line) CountBytesOnly() { p.files = 0 }
