package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/rollout-dev/rollout/internal/termsafe"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/internal/outfile"
	"github.com/rollout-dev/rollout/internal/pool"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/rollout-dev/rollout/schema"
	"github.com/rollout-dev/rollout/space"
	"github.com/spf13/cobra"
)

type spaceOptions struct {
	inputFlags
	format       string
	output       string
	top          int
	minRepeat    int
	coldAfter    time.Duration
	jobs         int
	maxLineBytes int64
	force        bool
	keepTurns    int
}

var spaceFormats = []string{"text", "json", "csv"}

func newSpaceCmd(a *app, runF func(context.Context, *spaceOptions) error) *cobra.Command {
	opts := &spaceOptions{}
	var coldAfter string
	cmd := &cobra.Command{
		Use:   "space [PATH...]",
		Short: "Show where the bytes of rollouts are, and what each reclaim policy would free",
		Long: `space reads rollouts once and accounts for every byte: by record type, by JSON
path class (arrays collapsed to [], e.g.
compacted.replacement_history[].content[].image_url), in large strings that
occur more than once (count x size), per file, and per tree of a parent thread
and the sub-agents it spawned. It ends with what each reclaim policy would
free and what it gives up:

  compress                cold plain files (idle for --cold-after) as .jsonl.zst
                          (the size is a zstd estimate); gives up nothing
  superseded-checkpoints  the replacement_history of compactions that a later
                          compaction supersedes; gives up rolling back past
                          the later compaction (not counted when a rollback
                          follows the newest compaction)
  duplicate-exec-output   command output in item_completed events that
                          repeats the same call's tool output exactly; gives
                          up the output a client shows when it re-opens the
                          thread

PATH is as for verify; with no PATH it reads $CODEX_HOME/sessions and
$CODEX_HOME/archived_sessions. Nothing is modified.`,
		Example: `  rollout space
  rollout space --top 20 ~/.codex/sessions/2026/03
  rollout space --format csv -o space.csv ~/.codex`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			d, err := parseDays(coldAfter)
			if err != nil {
				return usageError("use e.g. --cold-after 7d, 36h or 0s", "invalid --cold-after %q", coldAfter)
			}
			opts.coldAfter = d
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSpace(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.format, "format", "text", "output format: "+strings.Join(spaceFormats, "|"))
	f.StringVarP(&opts.output, "output", "o", "", "write the report to FILE instead of standard output")
	f.IntVar(&opts.top, "top", space.DefaultTop, "rows per table")
	f.IntVar(&opts.minRepeat, "min-repeat", space.DefaultMinRepeat, "smallest string (bytes) tracked for repetition")
	f.StringVar(&coldAfter, "cold-after", "7d", "a file idle this long is cold (compress policy): 7d, 36h, 0s")
	f.IntVar(&opts.jobs, "jobs", runtime.NumCPU(), "files read in parallel (output is identical for any value)")
	opts.addFilesFrom(f)
	f.Int64Var(&opts.maxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to walk; longer lines are counted unread")
	f.IntVar(&opts.keepTurns, "keep-turns", 20, "before-turn: the N of the estimate (rollbacks limited to the last N user turns)")
	f.BoolVar(&opts.force, "force", false, "read files whose first line is not a JSON object (a damaged first line)")
	return cmd
}

// parseDays is time.ParseDuration plus a "d" (24h) unit.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(days * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %q", s)
	}
	return d, err
}

func (o *spaceOptions) validate() error {
	ok := false
	for _, f := range spaceFormats {
		ok = ok || f == o.format
	}
	if !ok {
		return usageError("use --format "+strings.Join(spaceFormats, "|"), "invalid --format %q", o.format)
	}
	if o.keepTurns < 1 {
		return usageError("use --keep-turns 1 or more", "invalid --keep-turns %d", o.keepTurns)
	}
	if o.top < 1 {
		return usageError("use --top 1 or more", "invalid --top %d", o.top)
	}
	if o.minRepeat < 2 {
		return usageError("use --min-repeat 2 or more", "invalid --min-repeat %d", o.minRepeat)
	}
	if o.jobs < 1 {
		return usageError("use --jobs 1 or more", "invalid --jobs %d", o.jobs)
	}
	if o.maxLineBytes < 1 {
		return usageError("", "invalid --max-line-bytes %d", o.maxLineBytes)
	}
	return nil
}

type spaceOutcome struct {
	file    *space.File
	classes []space.Bucket
	err     error
}

func runSpace(ctx context.Context, a *app, o *spaceOptions) error {
	in, err := o.resolve(a)
	if err != nil {
		return err
	}
	paths := in.paths
	var inputs outfile.Inputs
	inputs.Add(paths...)
	if err := inputs.Check(o.output); err != nil {
		return outputConflict(err)
	}
	progress := newProgress(a.io, "reading", paths, a.io.ErrIsTTY && o.format == "text" && o.output == "")
	now := time.Now()
	sum := space.NewSummary(o.top)
	code := exitOK
	var failed []spaceFailure
	// Accounts fold into the summary in path order as they finish, so only
	// the files in the bounded run-ahead window are held whole (each file's
	// full path-class list is dropped once merged): memory follows the
	// largest files in flight, not the fleet.
	jobs := min(o.jobs, len(paths))
	work := func(i int) spaceOutcome {
		out := accountFile(paths[i], a.io.In, o, now, progress.add)
		progress.step()
		return out
	}
	pool.InOrder(len(paths), jobs, 2*jobs, nil, 0, work, func(i int, out spaceOutcome) {
		if out.err != nil {
			errorf(a.io.Err, "%v", out.err)
			failed = append(failed, spaceFailure{Path: paths[i], Error: out.err.Error()})
			code = exitIncomplete
			return
		}
		sum.Add(out.file, out.classes)
	})
	progress.finish()

	write := func(w io.Writer) error {
		switch o.format {
		case "json":
			return printSpaceJSON(w, sum, failed)
		case "csv":
			return printSpaceCSV(w, sum)
		}
		return printSpaceText(w, sum)
	}
	if o.output == "" {
		if err := write(a.io.Out); err != nil {
			return err
		}
	} else if err := outfile.Write(o.output, outfile.Options{}, write); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s: %w", o.output, err)}
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}

type spaceFailure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// accountFile reads one rollout into its space account.
func accountFile(path string, stdin io.Reader, o *spaceOptions, now time.Time, onRead func(int)) (out spaceOutcome) {
	defer func() {
		if v := recover(); v != nil {
			out = spaceOutcome{err: fmt.Errorf("internal error reading %s: %v\n%s", path, v, debug.Stack())}
		}
	}()
	f, err := rollout.OpenWith(path, stdin, rollout.OpenOptions{Force: o.force, OnRead: onRead})
	if err != nil {
		return spaceOutcome{err: err}
	}
	defer f.Close()
	var disk int64
	cold := false
	if path != rollout.StdinPath {
		if fi, err := os.Stat(path); err == nil {
			disk = fi.Size()
			cold = now.Sub(fi.ModTime()) >= o.coldAfter
		}
	}
	compressed := rollout.IsCompressed(path)
	var r io.Reader = f
	var cc *space.CompressCounter
	if cold && !compressed && path != rollout.StdinPath {
		cc = space.NewCompressCounter()
		r = io.TeeReader(f, cc)
	}
	// The space account is a record observer of the one replay loop.
	acct := space.New(space.Options{MinRepeat: o.minRepeat, Top: o.top, Plan: true})
	ro := reconstruct.ReplayOptions{MaxLineBytes: o.maxLineBytes, OnRecord: acct.Feed}
	ro.Path = path
	st, err := reconstruct.Replay(r, ro)
	if err != nil {
		return spaceOutcome{err: err}
	}
	file, classes := acct.Finish()
	file.EstimateBeforeTurn(o.keepTurns, st.UserTurnStarts())
	file.Cuts, file.Bulk, file.Checkpoints = nil, nil, nil // planned for the estimates only
	file.Path, file.Compressed, file.Cold = path, compressed, cold
	file.DiskBytes = disk
	if path == rollout.StdinPath {
		file.DiskBytes = file.Bytes
	}
	if cc != nil {
		file.CompressedBytes = cc.Size()
	}
	return spaceOutcome{file: file, classes: classes}
}

// size formats a byte count for people: 1,023 B, 12.3 KiB, 4.56 GiB.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

func share(n, total int64) string {
	if total == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

// bar is a 20-cell share bar: the treemap of a terminal.
func bar(n, total int64) string {
	const cells = 20
	full := 0
	if total > 0 {
		full = int((n*cells + total/2) / total)
	}
	return strings.Repeat("█", full) + strings.Repeat("░", cells-full)
}

func printSpaceText(w io.Writer, s *space.Summary) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%d files, %s on disk (%s of content, %d lines)\n", len(s.Files), size(s.DiskBytes), size(s.Bytes), s.Lines)
	if len(s.Files) == 0 {
		return ew.err
	}
	fmt.Fprintf(ew, "\nBY RECORD TYPE\n")
	for _, b := range s.ByType() {
		fmt.Fprintf(ew, "  %s %10s %6s %8d  %s\n", bar(b.Bytes, s.Bytes), size(b.Bytes), share(b.Bytes, s.Bytes), b.Count, termsafe.String(b.Name))
	}
	fmt.Fprintf(ew, "\nBY JSON PATH (top %d)\n", s.Top)
	for _, b := range s.ByClass() {
		fmt.Fprintf(ew, "  %10s %6s %8d  %s\n", size(b.Bytes), share(b.Bytes, s.Bytes), b.Count, termsafe.String(b.Name))
	}
	if reps := s.Repeats(); len(reps) > 0 {
		fmt.Fprintf(ew, "\nREPEATED STRINGS (copies x size, bytes beyond the first copy, class and place of the first)\n")
		for _, r := range reps {
			fmt.Fprintf(ew, "  %16s %10s  %s  %s:%d\n", fmt.Sprintf("%d x %s", r.Count, size(r.Size)), size(r.Wasted()), termsafe.String(r.Class), termsafe.String(r.Path), r.FirstLine)
		}
	}
	fmt.Fprintf(ew, "\nLARGEST FILES (on disk, content, lines)\n")
	for _, f := range s.Largest() {
		fmt.Fprintf(ew, "  %10s %10s %8d  %s\n", size(f.DiskBytes), size(f.Bytes), f.Lines, termsafe.String(f.Path))
	}
	if trees := s.Trees(); len(trees) > 0 {
		fmt.Fprintf(ew, "\nPARENT AND SUB-AGENT TREES (on disk, files, root)\n")
		for _, t := range trees {
			fmt.Fprintf(ew, "  %10s %8d  %s\n", size(t.DiskBytes), t.Files, termsafe.String(t.Root.Path))
		}
	}
	fmt.Fprintf(ew, "\nRECLAIM POLICIES (rollout reclaim --policy P; what each frees and gives up)\n")
	for _, p := range s.Reclaimable() {
		fmt.Fprintf(ew, "  %-22s %10s %6s in %d files; gives up %s\n", p.Policy, size(p.Bytes), share(p.Bytes, s.DiskBytes), p.Files, p.GivesUp)
	}
	return ew.err
}

// errWriter keeps the first write error so printers can check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

// spaceReport is the JSON report of `rollout space`: a designed schema,
// additive only.
type spaceReport struct {
	SchemaVersion int                `json:"schema_version"`
	Tool          string             `json:"tool"`
	Version       string             `json:"version"`
	Command       string             `json:"command"`
	Files         int                `json:"files"`
	DiskBytes     int64              `json:"disk_bytes"`
	Bytes         int64              `json:"bytes"`
	Lines         int64              `json:"lines"`
	ByType        []space.Bucket     `json:"by_type"`
	ByClass       []space.Bucket     `json:"by_class"`
	Repeats       []spaceRepeat      `json:"repeats"`
	Trees         []spaceTree        `json:"trees"`
	Policies      []space.PolicyFree `json:"policies"`
	PerFile       []spaceFile        `json:"per_file"`
	Errors        []spaceFailure     `json:"errors"`
}

type spaceRepeat struct {
	space.LocatedRepeat
	Wasted int64 `json:"wasted"`
}

type spaceTree struct {
	RootPath     string `json:"root_path"`
	RootThreadID string `json:"root_thread_id"`
	Files        int    `json:"files"`
	DiskBytes    int64  `json:"disk_bytes"`
	Bytes        int64  `json:"bytes"`
}

type spaceFile struct {
	Path           string           `json:"path"`
	ThreadID       string           `json:"thread_id"`
	ParentThreadID string           `json:"parent_thread_id"`
	DiskBytes      int64            `json:"disk_bytes"`
	Bytes          int64            `json:"bytes"`
	Lines          int              `json:"lines"`
	Compressed     bool             `json:"compressed"`
	Cold           bool             `json:"cold"`
	Compactions    int              `json:"compactions"`
	RepeatWasted   int64            `json:"repeat_wasted"`
	Reclaimable    map[string]int64 `json:"reclaimable"`
	ByType         []space.Bucket   `json:"by_type"`
	ByClass        []space.Bucket   `json:"by_class"`
}

func printSpaceJSON(w io.Writer, s *space.Summary, failed []spaceFailure) error {
	rep := spaceReport{SchemaVersion: schema.Version(schema.Space), Tool: "rollout", Version: version(), Command: "space",
		Files: len(s.Files), DiskBytes: s.DiskBytes, Bytes: s.Bytes, Lines: s.Lines,
		ByType: nonNil(s.ByType()), ByClass: nonNil(s.ByClass()), Policies: s.Reclaimable(),
		Repeats: []spaceRepeat{}, Trees: []spaceTree{}, PerFile: []spaceFile{}, Errors: failed}
	if rep.Errors == nil {
		rep.Errors = []spaceFailure{}
	}
	for _, r := range s.Repeats() {
		rep.Repeats = append(rep.Repeats, spaceRepeat{r, r.Wasted()})
	}
	for _, t := range s.Trees() {
		rep.Trees = append(rep.Trees, spaceTree{t.Root.Path, t.Root.ThreadID, t.Files, t.DiskBytes, t.Bytes})
	}
	for _, f := range s.Files {
		sf := spaceFile{Path: f.Path, ThreadID: f.ThreadID, ParentThreadID: f.ParentThreadID,
			DiskBytes: f.DiskBytes, Bytes: f.Bytes, Lines: f.Lines, Compressed: f.Compressed, Cold: f.Cold,
			Compactions: f.Compactions, RepeatWasted: f.RepeatWasted, Reclaimable: map[string]int64{},
			ByType: nonNil(f.ByType[:min(len(f.ByType), s.Top)]), ByClass: nonNil(f.ByClass)}
		for _, p := range space.Policies {
			sf.Reclaimable[p.Name] = f.Freed(p.Name)
		}
		rep.PerFile = append(rep.PerFile, sf)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func nonNil(b []space.Bucket) []space.Bucket {
	if b == nil {
		return []space.Bucket{}
	}
	return b
}

// printSpaceCSV writes one row per file.
func printSpaceCSV(w io.Writer, s *space.Summary) error {
	cw := csv.NewWriter(w)
	head := []string{"path", "thread_id", "parent_thread_id", "disk_bytes", "bytes", "lines", "compactions", "repeat_wasted"}
	for _, p := range space.Policies {
		head = append(head, "frees_"+strings.ReplaceAll(p.Name, "-", "_"))
	}
	cw.Write(head)
	for _, f := range s.Files {
		row := []string{f.Path, f.ThreadID, f.ParentThreadID, strconv.FormatInt(f.DiskBytes, 10),
			strconv.FormatInt(f.Bytes, 10), strconv.Itoa(f.Lines), strconv.Itoa(f.Compactions), strconv.FormatInt(f.RepeatWasted, 10)}
		for _, p := range space.Policies {
			row = append(row, strconv.FormatInt(f.Freed(p.Name), 10))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
