package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Inputs of a row.
const (
	inBig  = "big"
	inMany = "many"
)

// rowSpec is one measured command. argv placeholders: {rollout} (the
// binary under test), {self} (this benchtool), {big} (DIR/big.jsonl),
// {many} (DIR/many), {out} (a scratch output file, removed after each run).
type rowSpec struct {
	key      string // used by the targets
	name     string // shown in the table
	argv     []string
	input    string // inBig or inMany
	maxExit  int    // highest exit code that counts as success
	optional bool   // "not available" when the binary answers "unknown command"
	needs    string // a program that must be on PATH, otherwise the row is skipped
}

// rowSpecs is the benchmark. Adding a measured command is one line here.
var rowSpecs = []rowSpec{
	{key: "wc", name: "wc -l", argv: []string{"wc", "-l", "{big}"}, input: inBig},
	{key: "jq", name: "jq -c .type", argv: []string{"jq", "-c", ".type", "{big}"}, input: inBig, needs: "jq"},
	{key: "gjson", name: "benchtool gjson-scan", argv: []string{"{self}", "gjson-scan", "{big}"}, input: inBig},
	{key: "verify", name: "rollout verify --format json", argv: []string{"{rollout}", "verify", "--format", "json", "{big}"}, input: inBig, maxExit: 1},
	{key: "repair", name: "rollout repair", argv: []string{"{rollout}", "repair", "{big}"}, input: inBig, maxExit: 1, optional: true},
	{key: "repair-write", name: "rollout repair --write -o OUT", argv: []string{"{rollout}", "repair", "--write", "-o", "{out}", "{big}"}, input: inBig, maxExit: 1, optional: true},
	{key: "budget", name: "rollout simulate-budget", argv: []string{"{rollout}", "simulate-budget", "{big}"}, input: inBig, optional: true},
	{key: "jobs1", name: "rollout verify --jobs 1", argv: []string{"{rollout}", "verify", "--jobs", "1", "{many}"}, input: inMany, maxExit: 1},
	{key: "jobs2", name: "rollout verify --jobs 2", argv: []string{"{rollout}", "verify", "--jobs", "2", "{many}"}, input: inMany, maxExit: 1},
}

type rowState int

const (
	stMeasured rowState = iota
	stSkipped
	stUnavailable
	stFailed
)

type rowResult struct {
	spec   rowSpec
	state  rowState
	note   string // skip reason or failure
	stderr string // of the failed run
	runs   int
	best   time.Duration
	cpu    time.Duration // least user+sys CPU time over the runs
	rssKiB int64         // peak over all runs
	bytes  int64         // input size
}

func (r *rowResult) mbps() float64 {
	if r.state != stMeasured || r.runs == 0 || r.best <= 0 {
		return 0
	}
	return float64(r.bytes) / 1e6 / r.best.Seconds()
}

type runConfig struct {
	rollout, dir, md string
	reps             int
	timeout          time.Duration
	strict           bool
	tJQ, tGJSON      float64
	tRSS             float64
	tJobs, tRepair   float64
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var c runConfig
	fs.StringVar(&c.rollout, "rollout", "", "the rollout binary to measure (required)")
	fs.StringVar(&c.dir, "dir", "", "directory written by `benchtool gen` (required)")
	fs.StringVar(&c.md, "md", "", "also write the report (Markdown) to this file")
	fs.IntVar(&c.reps, "reps", 3, "repetitions per command (best wall time wins)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "limit per command run")
	fs.BoolVar(&c.strict, "strict", false, "exit 1 when a target fails")
	fs.Float64Var(&c.tJQ, "target-jq", 3, "target: verify MB/s >= this many times jq")
	fs.Float64Var(&c.tGJSON, "target-gjson", 1.0/3, "target: verify MB/s >= this fraction of gjson-scan")
	fs.Float64Var(&c.tRSS, "target-rss", 150, "target: verify peak RSS MiB on big.jsonl <= this")
	fs.Float64Var(&c.tJobs, "target-jobs", 1.5, "target: verify --jobs 2 speed-up over --jobs 1 >= this")
	fs.Float64Var(&c.tRepair, "target-repair", 2, "target: repair wall time <= this many times verify")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if c.rollout == "" || c.dir == "" || fs.NArg() > 0 || c.reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool run -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-strict]")
		return exitError(2)
	}
	shown := c.rollout // as given: the report holds no machine paths
	if p, err := filepath.Abs(c.rollout); err == nil && strings.ContainsRune(c.rollout, os.PathSeparator) {
		c.rollout = p
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	big := filepath.Join(c.dir, "big.jsonl")
	many := filepath.Join(c.dir, "many")
	if _, err := os.Stat(big); err != nil {
		return fmt.Errorf("%w (run `benchtool gen -o %s` first)", err, c.dir)
	}
	unlock, err := lockDir(c.dir, false)
	if err != nil {
		return err
	}
	defer unlock()
	bigInfo, err := os.Stat(big)
	if err != nil {
		return err
	}
	manyFiles, _ := filepath.Glob(filepath.Join(many, "rollout-*.jsonl"))
	if len(manyFiles) == 0 {
		return fmt.Errorf("no %s/rollout-*.jsonl (run `benchtool gen -o %s` first)", many, c.dir)
	}
	var manyBytes int64
	for _, p := range manyFiles {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		manyBytes += fi.Size()
	}
	scratch, err := os.MkdirTemp("", "benchtool-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	out := filepath.Join(scratch, "out.jsonl")

	// Page cache warm-up, so the first repetition is not the odd one out.
	for _, p := range append([]string{big}, manyFiles...) {
		if f, err := os.Open(p); err == nil {
			io.Copy(io.Discard, f)
			f.Close()
		}
	}

	var rep strings.Builder
	fmt.Fprintf(&rep, "- go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&rep, "- cpu: %s (%d logical CPUs)\n", cpuModel(), runtime.NumCPU())
	fmt.Fprintf(&rep, "- rollout: %s (%s)\n", shown, rolloutVersion(c.rollout))
	fmt.Fprintf(&rep, "- big.jsonl: %d bytes (%s)%s\n", bigInfo.Size(), fmtMB(bigInfo.Size()), stampNote(c.dir, "big.jsonl"))
	fmt.Fprintf(&rep, "- many/: %d files, %d bytes (%s)\n", len(manyFiles), manyBytes, fmtMB(manyBytes))
	fmt.Fprintf(&rep, "- each command runs %d times, interleaved with the others; best wall time; peak RSS is the maximum over the runs\n", c.reps)
	fmt.Print(rep.String())

	results := make([]*rowResult, len(rowSpecs))
	for i, s := range rowSpecs {
		r := &rowResult{spec: s, bytes: bigInfo.Size()}
		if s.input == inMany {
			r.bytes = manyBytes
		}
		if s.needs != "" {
			if _, err := exec.LookPath(s.needs); err != nil {
				r.state, r.note = stSkipped, "skipped ("+s.needs+" not on PATH)"
			}
		}
		results[i] = r
	}
	repl := strings.NewReplacer("{rollout}", c.rollout, "{self}", self, "{big}", big, "{many}", many, "{out}", out)
	for round := 0; round < c.reps; round++ {
		for _, r := range results {
			if r.state != stMeasured {
				continue
			}
			argv := make([]string, len(r.spec.argv))
			for i, a := range r.spec.argv {
				argv[i] = repl.Replace(a)
			}
			os.Remove(out)
			m := measure(argv, c.timeout)
			fmt.Fprintf(os.Stderr, "  [%d/%d] %-32s %8.3fs  exit %d  rss %d KiB\n", round+1, c.reps, r.spec.name, m.wall.Seconds(), m.exit, m.rssKiB)
			switch {
			case m.err != nil:
				r.state, r.note = stFailed, "FAILED: "+m.err.Error()
			case r.spec.optional && m.exit == 2 && strings.Contains(strings.ToLower(m.stderr), "unknown command"):
				r.state, r.note = stUnavailable, "not available"
			case m.exit < 0 || m.exit > r.spec.maxExit:
				r.state, r.note, r.stderr = stFailed, fmt.Sprintf("FAILED (exit %d)", m.exit), m.stderr
			default:
				if r.runs == 0 || m.wall < r.best {
					r.best = m.wall
				}
				r.runs++
				r.rssKiB = max(r.rssKiB, m.rssKiB)
			}
		}
	}
	os.Remove(out)

	by := map[string]*rowResult{}
	for _, r := range results {
		by[r.spec.key] = r
	}
	header := rep.String()
	rep.Reset()
	rep.WriteString("\n")
	rep.WriteString(table(results, by["jq"], c.reps))
	var notes strings.Builder
	for _, r := range results {
		if r.state == stFailed {
			fmt.Fprintf(&notes, "- `%s`: %s", r.spec.name, r.note)
			if s := strings.TrimSpace(r.stderr); s != "" {
				fmt.Fprintf(&notes, "; stderr: `%s`", oneLine(s, 300))
			}
			notes.WriteString("\n")
		}
	}
	if notes.Len() > 0 {
		rep.WriteString("\n" + notes.String())
	}
	checks, failed := targets(c, by)
	rep.WriteString("\n")
	for _, l := range checks {
		rep.WriteString(l + "\n")
	}
	fmt.Print(rep.String())

	if c.md != "" {
		var md strings.Builder
		md.WriteString("# Performance\n\n")
		md.WriteString("Generated by `benchtool run` (`make bench`); the figures are only meaningful as ratios\n")
		md.WriteString("measured side by side in one run (see the README's Performance section). Command line:\n\n")
		fmt.Fprintf(&md, "```\n%s\n```\n\n", commandLine())
		fmt.Fprintf(&md, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
		md.WriteString(header)
		md.WriteString(rep.String())
		if err := os.WriteFile(c.md, []byte(md.String()), 0o644); err != nil {
			return err
		}
	}

	hardFail := false
	for _, r := range results {
		if r.state == stFailed {
			hardFail = true
		}
	}
	if hardFail {
		return errors.New("some commands failed (see the table)")
	}
	if failed > 0 && c.strict {
		return fmt.Errorf("%d target(s) failed", failed)
	}
	return nil
}

func table(results []*rowResult, jq *rowResult, reps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| command | input | MB/s (best of %d) | peak RSS MiB | ratio vs jq |\n", reps)
	b.WriteString("|---|---|---:|---:|---:|\n")
	jqMBps := 0.0
	if jq != nil {
		jqMBps = jq.mbps()
	}
	for _, r := range results {
		input := "big.jsonl"
		if r.spec.input == inMany {
			input = "many/"
		}
		fmt.Fprintf(&b, "| `%s` | %s | ", r.spec.name, input)
		if r.state != stMeasured {
			fmt.Fprintf(&b, "%s | | |\n", r.note)
			continue
		}
		ratio := "n/a"
		if jqMBps > 0 {
			ratio = fmt.Sprintf("%.1fx", r.mbps()/jqMBps)
		}
		fmt.Fprintf(&b, "%s | %s | %s |\n", fmtRate(r.mbps()), fmtMiB(r.rssKiB), ratio)
	}
	return b.String()
}

// targets evaluates the performance targets; it returns the report lines
// and how many targets failed.
func targets(c runConfig, by map[string]*rowResult) ([]string, int) {
	var lines []string
	failed := 0
	ok := func(r *rowResult) bool { return r != nil && r.state == stMeasured && r.runs > 0 }
	line := func(name, value string, pass bool) {
		verdict := "PASS"
		if !pass {
			verdict = "FAIL"
			failed++
		}
		lines = append(lines, fmt.Sprintf("target %s: %s %s", name, value, verdict))
	}
	na := func(name, why string) { lines = append(lines, fmt.Sprintf("target %s: n/a (%s)", name, why)) }
	why := func(r *rowResult) string {
		if r == nil {
			return "no row"
		}
		return fmt.Sprintf("`%s` %s", r.spec.name, r.note)
	}

	verify := by["verify"]
	name := fmt.Sprintf("verify >= %gx jq", c.tJQ)
	switch {
	case !ok(verify):
		na(name, why(verify))
	case !ok(by["jq"]):
		na(name, why(by["jq"]))
	default:
		x := verify.mbps() / by["jq"].mbps()
		line(name, fmt.Sprintf("%.1fx", x), x >= c.tJQ)
	}
	name = fmt.Sprintf("verify >= %.2fx gjson-scan", c.tGJSON)
	switch {
	case !ok(verify):
		na(name, why(verify))
	case !ok(by["gjson"]):
		na(name, why(by["gjson"]))
	default:
		x := verify.mbps() / by["gjson"].mbps()
		line(name, fmt.Sprintf("%.2fx", x), x >= c.tGJSON)
	}
	name = fmt.Sprintf("peak RSS <= %g MiB", c.tRSS)
	if ok(verify) {
		mib := float64(verify.rssKiB) / 1024
		line(name, fmtMiB(verify.rssKiB)+" MiB", mib <= c.tRSS)
	} else {
		na(name, why(verify))
	}
	name = fmt.Sprintf("jobs2/jobs1 >= %gx", c.tJobs)
	j1, j2 := by["jobs1"], by["jobs2"]
	switch {
	case !ok(j1):
		na(name, why(j1))
	case !ok(j2):
		na(name, why(j2))
	default:
		x := j1.best.Seconds() / j2.best.Seconds()
		line(name, fmt.Sprintf("%.2fx", x), x >= c.tJobs)
	}
	for _, k := range []string{"repair", "repair-write"} {
		r := by[k]
		name = fmt.Sprintf("`%s` time <= %gx verify", r.spec.name, c.tRepair)
		switch {
		case !ok(r):
			na(name, why(r))
		case !ok(verify):
			na(name, why(verify))
		default:
			x := r.best.Seconds() / verify.best.Seconds()
			line(name, fmt.Sprintf("%.2fx", x), x <= c.tRepair)
		}
	}
	return lines, failed
}

type measurement struct {
	wall   time.Duration
	cpu    time.Duration // user+sys, the process and the children it waited for
	rssKiB int64
	exit   int
	stderr string
	err    error // could not run at all
}

// measure runs argv once with stdout discarded and reports its wall time,
// exit code and peak RSS (getrusage ru_maxrss: KiB on Linux).
func measure(argv []string, timeout time.Duration) measurement {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return measurement{err: err}
	}
	defer devnull.Close()
	cmd.Stdout = devnull
	var stderr tailBuffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	m := measurement{wall: time.Since(start), stderr: stderr.String()}
	if cmd.ProcessState == nil {
		m.err = err
		return m
	}
	if ctx.Err() != nil {
		m.err = fmt.Errorf("timed out after %v", timeout)
	}
	m.exit = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rssKiB = ru.Maxrss
		m.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return m
}

// tailBuffer keeps the first and last few KiB written to it.
type tailBuffer struct {
	head, tail bytes.Buffer
	dropped    bool
}

const tailKeep = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := tailKeep - t.head.Len(); room > 0 {
		k := min(room, len(p))
		t.head.Write(p[:k])
		p = p[k:]
	}
	if len(p) > 0 {
		t.tail.Write(p)
		if t.tail.Len() > 2*tailKeep {
			b := t.tail.Bytes()[t.tail.Len()-tailKeep:]
			t.tail.Reset()
			t.tail.Write(b)
			t.dropped = true
		}
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	if t.dropped {
		return t.head.String() + "\n[...]\n" + t.tail.String()
	}
	return t.head.String() + t.tail.String()
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func rolloutVersion(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return "`version` failed: " + err.Error()
	}
	return oneLine(string(out), 120)
}

func stampNote(dir, rel string) string {
	st, err := readStamp(dir)
	if err != nil {
		return ""
	}
	for _, o := range st.Outputs {
		if o.Path == rel {
			s := o.Stats
			return fmt.Sprintf(", gen v%d seed %d: %d lines, longest line %d bytes, %d turns, %d compactions, %d images",
				st.Spec.GenVersion, st.Spec.Seed, s.Lines, s.MaxLineBytes, s.Turns, s.Compactions, s.Images)
		}
	}
	return ""
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

func fmtRate(mbps float64) string {
	if mbps >= 100 {
		return fmt.Sprintf("%.0f", mbps)
	}
	return fmt.Sprintf("%.1f", mbps)
}

func fmtMiB(kib int64) string {
	mib := float64(kib) / 1024
	if mib >= 10 {
		return fmt.Sprintf("%.0f", mib)
	}
	return fmt.Sprintf("%.1f", mib)
}

// commandLine is the invocation, shell-quoted, with argv[0] as its base
// name (under `go run` it is a temporary path).
func commandLine() string {
	parts := []string{filepath.Base(os.Args[0])}
	for _, a := range os.Args[1:] {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
