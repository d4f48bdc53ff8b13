package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/rollout-dev/rollout/internal/output/report"
)

// progress is the one progress line of every long-running command (verify,
// space, reclaim, simulate-budget over many rollouts, repair of many
// files): "verifying 2/5 files, 80.0 MiB of 201.1 MiB (39%), 52.1 MiB/s,
// ETA 2s" on stderr, redrawn in place. It shows only when stderr is a
// terminal and --quiet is not given (the caller decides: enabled), and
// only for a run worth it: several files, or one of progressMinBytes. It
// counts bytes as stored, so one big file shows progress too; the rate
// and the ETA follow the bytes (the files, when the size is unknown).
type progress struct {
	mu      sync.Mutex
	io      *IO
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

// progressMinBytes: a single file smaller than this is read before a
// progress line would be worth reading.
const progressMinBytes = 32 << 20

// newProgress starts the progress of a run over paths; enabled is the
// caller's "stderr is a terminal and no --quiet".
func newProgress(io *IO, verb string, paths []string, enabled bool) *progress {
	p := &progress{io: io, verb: verb, files: len(paths), now: time.Now}
	if !enabled {
		return p // nothing is drawn: no file to stat
	}
	for _, path := range paths {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			p.total += fi.Size()
		}
	}
	p.enabled = enabled && (len(paths) > 1 || p.total >= progressMinBytes)
	return p
}

// addQuiet adds --quiet to a command whose only chatter is its progress.
func addQuiet(f *pflag.FlagSet, p *bool) {
	f.BoolVarP(p, "quiet", "q", false, "no progress line on the terminal")
}

// showProgress is whether a command shows progress: on a terminal, and
// not with --quiet.
func showProgress(a *app, quiet bool) bool { return a.io.ErrIsTTY && !quiet }

// add counts bytes read; it redraws at most every 100ms.
func (p *progress) add(n int) {
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

// step counts a file done.
func (p *progress) step() {
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

func (p *progress) begin(t time.Time) {
	if p.start.IsZero() {
		p.start = t
	}
}

func (p *progress) draw(t time.Time) {
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
	fmt.Fprintf(p.io.Err, "\r%s\033[K", line)
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
func (p *progress) clear() {
	if p.shown {
		fmt.Fprintf(p.io.Err, "\r\033[K")
		p.shown = false
	}
}

// writer returns w, or with the progress line shown a writer that clears
// the line before each write, so that output streamed to the terminal
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
