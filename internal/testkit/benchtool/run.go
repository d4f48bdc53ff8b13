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
	inBig  = "big.jsonl"
	inMany = "many/"
)

// pythonLoop is the Python peer of issue 38: the json loop a user writes
// to read a rollout's record types, every line parsed whole.
const pythonLoop = `import json, sys
n = 0
for line in open(sys.argv[1], "rb"):
    try:
        v = json.loads(line)
    except ValueError:
        continue
    if isinstance(v, dict):
        v.get("type")
        n += 1
print(n)
`

// pythonRow runs pythonLoop over the file path stands for.
func pythonRow(key, input, path string) *row {
	return &row{key: key, input: input, name: "python3 json loop", needs: "python3",
		argv: []string{"python3", "-c", pythonLoop, path}}
}

// runRows is the big-file benchmark. argv placeholders: {rollout} (the
// binary under test), {self} (this benchtool), {big} (DIR/big.jsonl),
// {many} (DIR/many), {out} (a scratch output file, removed before each
// run). Adding a measured command is one line here.
func runRows() []*row {
	return []*row{
		{key: "wc", name: "wc -l", argv: []string{"wc", "-l", "{big}"}, input: inBig},
		{key: "jq", name: "jq -c .type", argv: []string{"jq", "-c", ".type", "{big}"}, input: inBig, needs: "jq"},
		{key: "gjson", name: "benchtool gjson-scan", argv: []string{"{self}", "gjson-scan", "{big}"}, input: inBig},
		pythonRow("python", inBig, "{big}"),
		{key: "verify", name: "rollout verify --format json", argv: []string{"{rollout}", "verify", "--format", "json", "{big}"}, input: inBig, maxExit: 1},
		{key: "repair", name: "rollout repair", argv: []string{"{rollout}", "repair", "{big}"}, input: inBig, maxExit: 1, optional: true},
		{key: "repair-write", name: "rollout repair --write -o OUT", argv: []string{"{rollout}", "repair", "--write", "-o", "{out}", "{big}"}, input: inBig, maxExit: 1, optional: true},
		{key: "budget", name: "rollout simulate-budget", argv: []string{"{rollout}", "simulate-budget", "{big}"}, input: inBig, optional: true},
		{key: "jobs1", name: "rollout verify --jobs 1", argv: []string{"{rollout}", "verify", "--jobs", "1", "{many}"}, input: inMany, maxExit: 1},
		{key: "jobs2", name: "rollout verify --jobs 2", argv: []string{"{rollout}", "verify", "--jobs", "2", "{many}"}, input: inMany, maxExit: 1},
	}
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
	fs.StringVar(&c.md, "md", "", "also write the report into this Markdown file (its section `run`)")
	fs.IntVar(&c.reps, "reps", 5, "rounds: each command runs once per round")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "limit per command run")
	fs.BoolVar(&c.strict, "strict", false, "exit 1 when a target fails")
	fs.Float64Var(&c.tJQ, "target-jq", 3, "target: verify at least this many times faster than jq")
	fs.Float64Var(&c.tGJSON, "target-gjson", 1.5, "target: verify at least this many times faster than gjson-scan")
	fs.Float64Var(&c.tRSS, "target-rss", 150, "target: verify peak RSS MiB on big.jsonl <= this")
	fs.Float64Var(&c.tJobs, "target-jobs", 1.5, "target: verify --jobs 2 wall-time speed-up over --jobs 1 >= this")
	fs.Float64Var(&c.tRepair, "target-repair", 2, "target: repair CPU time <= this many times verify")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if c.rollout == "" || c.dir == "" || fs.NArg() > 0 || c.reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool run -rollout BINARY -dir DIR [-md FILE] [-reps 5] [-strict]")
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

	// Page cache warm-up, so the first round is not the odd one out.
	for _, p := range append([]string{big}, manyFiles...) {
		if f, err := os.Open(p); err == nil {
			io.Copy(io.Discard, f)
			f.Close()
		}
	}

	rows := runRows()
	for _, r := range rows {
		r.bytes = bigInfo.Size()
		if r.input == inMany {
			r.bytes = manyBytes
		}
		r.before = func() { removeOutputs(out) }
	}
	var load loadLog
	start := time.Now()
	runRounds(rows, c.reps, c.timeout, strings.NewReplacer("{rollout}", c.rollout, "{self}", self, "{big}", big, "{many}", many, "{out}", out), &load)

	var rep strings.Builder
	fmt.Fprintf(&rep, "```sh\n%s\n```\n\n", commandLine())
	fmt.Fprintf(&rep, "- date: %s; %s\n", start.UTC().Format("2006-01-02 15:04 UTC"), load.String())
	fmt.Fprintf(&rep, "- go: %s %s/%s; cpu: %s (%d logical CPUs)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, cpuModel(), runtime.NumCPU())
	fmt.Fprintf(&rep, "- rollout: %s (%s)\n", shown, rolloutVersion(c.rollout))
	fmt.Fprintf(&rep, "- big.jsonl: %d bytes (%s)%s\n", bigInfo.Size(), fmtMB(bigInfo.Size()), stampNote(c.dir, "big.jsonl"))
	fmt.Fprintf(&rep, "- many/: %d files, %d bytes (%s)\n", len(manyFiles), manyBytes, fmtMB(manyBytes))
	fmt.Fprintf(&rep, "- %d rounds, each running every command once; ratios are taken round by round (paired runs) and given as median (range)\n\n", c.reps)
	rep.WriteString(rowTable(rows, c.reps))
	t := runTargets(c, rows)
	rep.WriteString("\n")
	for _, l := range t.lines {
		rep.WriteString(l + "\n")
	}
	fmt.Print(rep.String())
	if c.md != "" {
		if err := writeSection(c.md, "run", rep.String()); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.state == stFailed {
			return errors.New("some commands failed (see the table)")
		}
	}
	if t.failed > 0 && c.strict {
		return fmt.Errorf("%d target(s) failed", t.failed)
	}
	return nil
}

// removeOutputs removes a scratch output and what repair writes beside it.
func removeOutputs(out string) {
	for _, suffix := range []string{"", ".quarantine.jsonl", ".undo.json"} {
		os.Remove(out + suffix)
	}
}

// runTargets evaluates the big-file targets (CPU time unless said).
func runTargets(c runConfig, rows []*row) *targets {
	t := newTargets(rows)
	t.atLeast("verify faster than jq (CPU)", "verify", "jq", c.tJQ, false)
	t.atLeast("verify faster than gjson-scan (CPU)", "verify", "gjson", c.tGJSON, false)
	t.rss("verify", "verify", c.tRSS)
	t.atLeast("verify --jobs 2 speed-up over --jobs 1 (wall)", "jobs2", "jobs1", c.tJobs, true)
	t.atMost("repair / verify (CPU, nothing to fix)", "repair", "verify", c.tRepair, false)
	t.atMost("repair --write / verify (CPU, nothing to fix)", "repair-write", "verify", c.tRepair, false)
	// Issue 38, target 1 on the big file.
	t.atMost("verify / gjson-scan (CPU)", "verify", "gjson", 0.8, false)
	t.atMost("verify / jq -c .type (CPU)", "verify", "jq", 0.25, false)
	t.atMost("verify / python3 json loop (CPU)", "verify", "python", 0.3, false)
	return t
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
	first, _, _ := strings.Cut(string(out), "\n")
	return oneLine(first, 120)
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
	for i, a := range os.Args[1:] {
		if i > 0 && (os.Args[i] == "-dir" || os.Args[i] == "--dir") {
			parts = append(parts, "$BENCH_DIR") // the doc names no directory of this machine
			continue
		}
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
