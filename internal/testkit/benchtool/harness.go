package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The measuring harness of run, frames and shapes: every row runs once per
// round, the rounds interleave the rows, and a ratio between two rows is
// taken round by round (paired runs on the same input, moments apart), so
// a shared machine's load moves both sides of a ratio together. Figures are
// medians with their spread (min-max over the rounds); CPU time (user+sys)
// is the steadier figure on a loaded machine, wall time the one a user
// waits for.

// row is one measured command. argv placeholders are replaced by the
// caller's replacer before the run.
type row struct {
	key      string // used by the targets
	name     string // shown in the table
	input    string // shown in the table
	argv     []string
	bytes    int64 // input size, for MB/s
	maxExit  int   // highest exit code that counts as success
	optional bool  // "not available" when the binary answers "unknown command"
	needs    string
	before   func() // run before each measurement (remove a scratch output)

	state   rowState
	note    string
	stderr  string
	samples []sample // one per round, in round order
}

type rowState int

const (
	stMeasured rowState = iota
	stSkipped
	stUnavailable
	stFailed
)

type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

func (r *row) ok() bool { return r != nil && r.state == stMeasured && len(r.samples) > 0 }

func (r *row) cpus() []float64 {
	out := make([]float64, len(r.samples))
	for i, s := range r.samples {
		out[i] = s.cpu.Seconds()
	}
	return out
}

func (r *row) walls() []float64 {
	out := make([]float64, len(r.samples))
	for i, s := range r.samples {
		out[i] = s.wall.Seconds()
	}
	return out
}

func (r *row) rssKiB() int64 {
	var m int64
	for _, s := range r.samples {
		m = max(m, s.rssKiB)
	}
	return m
}

// spread is the median and range of a set of figures.
type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med: med, lo: s[0], hi: s[len(s)-1]}
}

// format prints the median and the range with a precision of prec decimals.
func (s spread) format(prec int, unit string) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', prec, 64) }
	if f(s.lo) == f(s.hi) {
		return f(s.med) + unit
	}
	return f(s.med) + unit + " (" + f(s.lo) + "-" + f(s.hi) + ")"
}

// pairedRatio is a/b round by round; wall selects wall time instead of CPU
// time. Only rounds both rows have are paired.
func pairedRatio(a, b *row, wall bool) (spread, int) {
	n := min(len(a.samples), len(b.samples))
	xs := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		x, y := a.samples[i].cpu, b.samples[i].cpu
		if wall {
			x, y = a.samples[i].wall, b.samples[i].wall
		}
		if y > 0 {
			xs = append(xs, x.Seconds()/y.Seconds())
		}
	}
	return spreadOf(xs), len(xs)
}

// loadLog samples the 1-minute load average before every command.
type loadLog struct{ xs []float64 }

func (l *loadLog) sample() {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return
	}
	if x, err := strconv.ParseFloat(f[0], 64); err == nil {
		l.xs = append(l.xs, x)
	}
}

func (l *loadLog) String() string {
	if len(l.xs) == 0 {
		return "unknown"
	}
	return "1-minute load average " + spreadOf(l.xs).format(2, "") + " over the run's commands"
}

// runRounds measures rows reps times, interleaved. repl fills the argv
// placeholders; label prefixes the progress lines on stderr.
func runRounds(rows []*row, reps int, timeout time.Duration, repl *strings.Replacer, load *loadLog) {
	for _, r := range rows {
		if r.needs != "" {
			if _, err := exec.LookPath(r.needs); err != nil {
				r.state, r.note = stSkipped, "skipped ("+r.needs+" not on PATH)"
			}
		}
	}
	for round := 0; round < reps; round++ {
		for _, r := range rows {
			if r.state != stMeasured {
				continue
			}
			argv := make([]string, len(r.argv))
			for i, a := range r.argv {
				argv[i] = repl.Replace(a)
			}
			if r.before != nil {
				r.before()
			}
			load.sample()
			m := measure(argv, timeout)
			fmt.Fprintf(os.Stderr, "  [%d/%d] %-20s %-44s cpu %7.3fs wall %7.3fs exit %d rss %d KiB\n",
				round+1, reps, r.input, r.name, m.cpu.Seconds(), m.wall.Seconds(), m.exit, m.rssKiB)
			switch {
			case m.err != nil:
				r.state, r.note = stFailed, "FAILED: "+m.err.Error()
			case r.optional && m.exit == 2 && strings.Contains(strings.ToLower(m.stderr), "unknown command"):
				r.state, r.note = stUnavailable, "not available"
			case m.exit < 0 || m.exit > r.maxExit:
				r.state, r.note, r.stderr = stFailed, fmt.Sprintf("FAILED (exit %d)", m.exit), m.stderr
			default:
				r.samples = append(r.samples, sample{wall: m.wall, cpu: m.cpu, rssKiB: m.rssKiB})
			}
		}
	}
	if rows != nil && rows[0].before != nil {
		rows[0].before()
	}
}

// rowTable is the Markdown table of rows: CPU and wall time (median and
// range), throughput at the median CPU time, peak RSS.
func rowTable(rows []*row, reps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| input | command | CPU s, median of %d (range) | wall s, median (range) | MB/s (CPU) | peak RSS MiB |\n", reps)
	b.WriteString("|---|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | `%s` | ", r.input, r.name)
		if !r.ok() {
			note := r.note
			if r.state == stFailed && strings.TrimSpace(r.stderr) != "" {
				note += ": `" + oneLine(r.stderr, 200) + "`"
			}
			fmt.Fprintf(&b, "%s | | | |\n", note)
			continue
		}
		cpu := spreadOf(r.cpus())
		mbps := ""
		if cpu.med > 0 && r.bytes > 0 {
			mbps = fmtRate(float64(r.bytes) / 1e6 / cpu.med)
		}
		fmt.Fprintf(&b, "%s | %s | %s | %s |\n", cpu.format(3, ""), spreadOf(r.walls()).format(3, ""), mbps, fmtMiB(r.rssKiB()))
	}
	return b.String()
}

// targets evaluates target lines over rows found by key.
type targets struct {
	by     map[string]*row
	lines  []string
	failed int
}

func newTargets(rows []*row) *targets {
	t := &targets{by: map[string]*row{}}
	for _, r := range rows {
		t.by[r.key] = r
	}
	return t
}

func (t *targets) have(keys ...string) bool {
	for _, k := range keys {
		if r := t.by[k]; !r.ok() {
			why := "no row"
			if r != nil {
				why = "`" + r.name + "` " + r.note
			}
			t.lines = append(t.lines, fmt.Sprintf("target needs `%s`: n/a (%s)", k, why))
			return false
		}
	}
	return true
}

func (t *targets) verdict(name, value string, pass bool) {
	v := "PASS"
	if !pass {
		v = "FAIL"
		t.failed++
	}
	t.lines = append(t.lines, fmt.Sprintf("target %s: %s %s", name, value, v))
}

// atMost: time(a)/time(b) <= limit, by the median of the paired ratios.
func (t *targets) atMost(name, a, b string, limit float64, wall bool) {
	if !t.have(a, b) {
		return
	}
	s, n := pairedRatio(t.by[a], t.by[b], wall)
	t.verdict(fmt.Sprintf("%s <= %gx", name, limit), fmt.Sprintf("%s over %d paired runs", s.format(2, "x"), n), s.med <= limit)
}

// atLeast: time(b)/time(a) >= limit (a is that many times faster than b).
func (t *targets) atLeast(name, a, b string, limit float64, wall bool) {
	if !t.have(a, b) {
		return
	}
	s, n := pairedRatio(t.by[b], t.by[a], wall)
	t.verdict(fmt.Sprintf("%s >= %gx", name, limit), fmt.Sprintf("%s over %d paired runs", s.format(2, "x"), n), s.med >= limit)
}

// rss: peak RSS of a row <= limit MiB.
func (t *targets) rss(name, key string, limit float64) {
	if !t.have(key) {
		return
	}
	mib := float64(t.by[key].rssKiB()) / 1024
	t.verdict(fmt.Sprintf("%s peak RSS <= %g MiB", name, limit), fmt.Sprintf("%.0f MiB", mib), mib <= limit)
}
