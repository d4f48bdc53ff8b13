package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/forest"
	"github.com/rollout-dev/rollout/internal/termsafe"
	"github.com/rollout-dev/rollout/reclaim"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/repair"
	"github.com/rollout-dev/rollout/report"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/rollout-dev/rollout/schema"
	"github.com/rollout-dev/rollout/space"
	"github.com/spf13/cobra"
)

type reclaimOptions struct {
	paths    []string
	policies []string
	write    bool
	undo     bool
	format   string
	output   string
	opts     reclaim.Options
}

func newReclaimCmd(a *app, runF func(context.Context, *reclaimOptions) error) *cobra.Command {
	o := &reclaimOptions{}
	var coldAfter string
	cmd := &cobra.Command{
		Use:   "reclaim [PATH...] --policy P[,P...]",
		Short: "Free the disk space of rollouts under stated policies, proving resume is unchanged",
		Long: `reclaim frees disk space under the policies named with --policy; each says what
it gives up (docs/reclaim.md):

  compress                cold plain files (idle for --cold-after) become
                          .jsonl.zst, which Codex reads as they are; gives up nothing
  superseded-checkpoints  empties the replacement_history of each compaction that
                          a later compaction supersedes; gives up rolling back
                          past the later compaction
  duplicate-exec-output   removes command output from item_completed events when
                          it repeats the same call's tool output exactly; gives up
                          the output a client shows when it re-opens the thread
                          (the model's history keeps the tool output)
  before-turn=N           empties, before the compaction a rollback of N user
                          turns falls back to, the large tool outputs, arguments,
                          images and blobs of tool items and events (strings of
                          1 KiB or more) and older checkpoints' replacement_history;
                          every line stays, with its ids and ordinal. Gives up
                          rolling back more than N turns, forking before that
                          compaction, and that content in a client's transcript

It is a dry run unless --write is given. Before anything is written, the old
and the new file are replayed and what resume rebuilds (history items, turns,
world state, window lineage, token totals, handoffs) is compared; any
difference, or a finding the old file did not have, refuses the file (exit 4).
A parent thread and its sub-agents among the inputs are reclaimed together or
not at all. Every removed byte goes to FILE.reclaimed.jsonl.zst, and
` + "`rollout reclaim --undo FILE`" + ` restores the original bytes exactly.

PATH is as for verify; with no PATH it reads $CODEX_HOME/sessions and
$CODEX_HOME/archived_sessions.`,
		Example: `  rollout reclaim --policy superseded-checkpoints,duplicate-exec-output ~/.codex/sessions
  rollout reclaim --policy compress --cold-after 30d --write ~/.codex/archived_sessions
  rollout reclaim --undo ~/.codex/sessions/2026/03/10/rollout-…jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			d, err := parseDays(coldAfter)
			if err != nil {
				return usageError("use e.g. --cold-after 7d, 36h or 0s", "invalid --cold-after %q", coldAfter)
			}
			o.opts.ColdAfter = d
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runReclaim(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.policies, "policy", nil, "policies to apply: "+strings.Join(reclaim.Policies, ","))
	f.BoolVar(&o.write, "write", false, "apply the plan (the default is a dry run)")
	f.BoolVar(&o.undo, "undo", false, "restore each FILE from its FILE.reclaimed.jsonl.zst archive")
	f.StringVar(&coldAfter, "cold-after", "7d", "compress: a file idle this long (mtime) is cold: 7d, 36h, 0s")
	f.StringVar(&o.format, "format", "text", "output format: text|json")
	addOutput(f, &o.output, "the report")
	f.Int64Var(&o.opts.MaxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to analyse")
	f.BoolVar(&o.opts.Force, "force", false, "write a file another process holds open for writing (an agent idle between turns would then write to the replaced file)")
	f.Int64Var(&o.opts.HandoffCap, "handoff-cap", reconstruct.DefaultHandoffCap, "cap of a context handoff's budget, for the proof's rule run")
	return cmd
}

func (o *reclaimOptions) validate() error {
	if o.format != "text" && o.format != "json" {
		return usageError("use --format text|json", "invalid --format %q", o.format)
	}
	if o.undo {
		if len(o.policies) > 0 || o.write {
			return usageError("run --undo alone: it always writes", "--undo takes no --policy or --write")
		}
		if len(o.paths) == 0 {
			return usageError("name the reclaimed rollout: rollout reclaim --undo FILE", "--undo needs a FILE")
		}
		return nil
	}
	if len(o.policies) == 0 {
		return usageError("choose from "+strings.Join(reclaim.Policies, ", ")+" (see rollout space for what each frees)", "reclaim needs --policy")
	}
	o.opts.Policies = nil
	for _, p := range o.policies {
		if n, ok := strings.CutPrefix(p, space.PolicyBeforeTurn+"="); ok {
			turns, err := strconv.Atoi(n)
			if err != nil || turns < 1 {
				return usageError("use --policy before-turn=N with N >= 1, the user turns a rollback may still undo", "invalid policy %q", p)
			}
			o.opts.BeforeTurn, p = turns, space.PolicyBeforeTurn
		} else if p == space.PolicyBeforeTurn {
			return usageError("use --policy before-turn=N, e.g. before-turn=20", "before-turn needs N: the user turns a rollback may still undo")
		}
		if !slices.Contains(reclaim.Policies, p) {
			return usageError("choose from "+strings.Join(reclaim.Policies, ", "), "unknown policy %q", p)
		}
		o.opts.Policies = append(o.opts.Policies, p)
	}
	return nil
}

// reclaimFile is one file's outcome, as printed.
type reclaimFile struct {
	Path           string            `json:"path"`
	ThreadID       string            `json:"thread_id"`
	OutPath        string            `json:"out_path"`
	Archive        string            `json:"archive"`
	BytesBefore    int64             `json:"bytes_before"`
	BytesAfter     int64             `json:"bytes_after"`
	ArchiveBytes   int64             `json:"archive_bytes"`
	Freed          int64             `json:"freed"`
	Cuts           map[string]int    `json:"cuts"`
	Frees          map[string]int64  `json:"frees"`
	Skipped        map[string]string `json:"skipped"`
	Blocked        string            `json:"blocked,omitempty"`
	StateIdentical bool              `json:"resume_state_identical"`
	StateDiff      string            `json:"state_diff,omitempty"`
	NewFindings    []string          `json:"new_findings,omitempty"`
	Refused        string            `json:"refused,omitempty"`
	Written        bool              `json:"written"`
	Late           *lateBytes        `json:"late,omitempty"`
	Error          string            `json:"error,omitempty"`
	// Projection is Codex's history projection of the thread the cuts
	// invalidate: --write deletes it (and keeps its rows for --undo).
	Projection *reclaimProjection `json:"projection,omitempty"`
}

type reclaimProjection struct {
	ThreadID string `json:"thread_id"`
	DB       string `json:"db"`
	Cursor   int64  `json:"cursor"`
	From     int64  `json:"from"`
	Items    int    `json:"items"`
	Turns    int    `json:"turns"`
	Deleted  bool   `json:"deleted"`
}

// lateBytes is what an agent appended while the file was replaced: not in
// the new file, kept in KeptIn.
type lateBytes struct {
	Bytes  int64  `json:"bytes"`
	KeptIn string `json:"kept_in"`
}

func runReclaim(ctx context.Context, a *app, o *reclaimOptions) error {
	if o.undo {
		return runReclaimUndo(a, o)
	}
	in, err := (&inputFlags{paths: o.paths}).resolve(a)
	if err != nil {
		return err
	}
	paths := in.paths
	if err := checkOutputsOf(paths, o.output); err != nil {
		return err
	}
	o.opts.Now = time.Now()
	var status exitStatus
	raise := status.raise

	var lates []*repair.Late
	files := make([]*reclaimFile, len(paths))
	plans := make([]*reclaim.Plan, len(paths))
	for i, p := range paths {
		files[i] = &reclaimFile{Path: p, Cuts: map[string]int{}, Frees: map[string]int64{}, Skipped: map[string]string{}}
		plan, _, err := reclaim.PlanFile(p, o.opts)
		if err != nil {
			files[i].Error = err.Error()
			raise(exitIncomplete)
			continue
		}
		plans[i] = plan
		fillPlan(files[i], plan)
	}
	// A parent and its sub-agents are reclaimed together or not at all.
	for _, group := range reclaimTrees(plans) {
		pend := map[int]*reclaim.Pending{}
		refused := ""
		for _, i := range group {
			pd, err := reclaim.Prepare(plans[i], o.opts, o.write)
			if err != nil {
				files[i].Error = err.Error()
				refused = fmt.Sprintf("%s could not be prepared", paths[i])
				raise(exitUnsafe)
				continue
			}
			pend[i] = pd
			res := pd.Result
			files[i].BytesAfter, files[i].ArchiveBytes = res.BytesAfter, res.ArchiveBytes
			files[i].Freed = files[i].BytesBefore - res.BytesAfter
			files[i].StateIdentical = res.Identical
			files[i].StateDiff = res.StateDiff
			files[i].NewFindings = res.NewFindings
			if pp := res.Projection; pp != nil {
				files[i].Projection = &reclaimProjection{ThreadID: pp.ThreadID, DB: pp.DB, Cursor: pp.Cursor, From: pp.From, Items: pp.Items, Turns: pp.Turns}
			}
			if res.Refused() {
				files[i].Refused = "resume would differ"
				refused = fmt.Sprintf("%s was refused", paths[i])
				raise(exitUnsafe)
			}
		}
		for _, i := range group {
			if pend[i] == nil {
				continue
			}
			if refused != "" && files[i].Refused == "" && files[i].Error == "" {
				files[i].Refused = "its thread tree is reclaimed together, and " + refused
			}
			if o.write && refused == "" {
				if err := pend[i].Commit(); err != nil {
					files[i].Error = err.Error()
					raise(exitUnsafe)
				}
				files[i].Written = pend[i].Result.Written
				if pp := pend[i].Result.Projection; pp != nil && files[i].Projection != nil {
					files[i].Projection.Deleted = pp.Deleted
				}
				if l := pend[i].Result.Late; l != nil {
					files[i].Late = &lateBytes{Bytes: l.Bytes, KeptIn: l.Kept}
					lates = append(lates, l)
					raise(exitUnsafe)
				}
			}
			pend[i].Discard()
		}
	}
	if err := writeOutput(a, o.output, "the report", func(w io.Writer) error {
		if o.format != "json" {
			printReclaimText(w, files, o)
			return nil
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			SchemaVersion int            `json:"schema_version"`
			Command       string         `json:"command"`
			DryRun        bool           `json:"dry_run"`
			Policies      []string       `json:"policies"`
			Files         []*reclaimFile `json:"files"`
		}{schema.Version(schema.Reclaim), "reclaim", !o.write, o.policies, files})
	}); err != nil {
		return err
	}
	for _, l := range lates {
		reportError(a.io, lateError(l))
	}
	return status.err()
}

func fillPlan(f *reclaimFile, p *reclaim.Plan) {
	f.ThreadID, f.BytesBefore, f.BytesAfter = p.ThreadID, p.DiskBytes, p.DiskBytes
	f.OutPath, f.Archive, f.Blocked = p.OutPath(), reclaim.ArchivePath(p.Path), p.Blocked
	for _, c := range p.Cuts {
		f.Cuts[c.Policy]++
	}
	for k, v := range p.Frees {
		f.Frees[k] = v
	}
	for k, v := range p.Skipped {
		f.Skipped[k] = v
	}
	if p.Compress {
		f.Cuts[space.PolicyCompress] = 1
	}
}

// reclaimTrees groups the indexes of the plans by their tree among the
// inputs (files that could not be planned are in none).
func reclaimTrees(plans []*reclaim.Plan) [][]int {
	nodes := make([]forest.Node, len(plans))
	for i, p := range plans {
		if p != nil {
			nodes[i] = forest.Node{ID: p.ThreadID, Parent: p.Parent}
		}
	}
	var out [][]int
	for _, tree := range forest.New(nodes).Trees() {
		if plans[tree[0]] != nil {
			out = append(out, tree)
		}
	}
	return out
}

func printReclaimText(w io.Writer, files []*reclaimFile, o *reclaimOptions) {
	var before, after, archived int64
	written, refused := 0, 0
	for _, f := range files {
		if f.Error != "" {
			fmt.Fprintf(w, "%s: error: %s\n", termsafe.String(f.Path), termsafe.String(f.Error))
			continue
		}
		before += f.BytesBefore
		after += f.BytesAfter
		archived += f.ArchiveBytes
		verdict := "resume state identical"
		switch {
		case f.Refused != "" && !f.StateIdentical:
			verdict = "REFUSED: resume state would differ"
		case f.Refused != "" && len(f.NewFindings) > 0:
			verdict = "REFUSED: the new file would have findings the old one has not"
		case f.Refused != "":
			verdict = "REFUSED: " + f.Refused
		}
		if f.Refused != "" {
			refused++
		}
		if f.Written {
			written++
		}
		if f.Blocked != "" {
			fmt.Fprintf(w, "%s: skipped: %s\n", termsafe.String(f.Path), termsafe.String(f.Blocked))
			continue
		}
		if len(f.Cuts) == 0 {
			fmt.Fprintf(w, "%s: nothing to reclaim\n", termsafe.String(f.Path))
		} else {
			fmt.Fprintf(w, "%s: %s -> %s (+ %s archive), frees %s; %s\n", termsafe.String(f.Path), report.Size(f.BytesBefore), report.Size(f.BytesAfter), report.Size(f.ArchiveBytes), report.Size(f.Freed), verdict)
		}
		for _, p := range reclaim.Policies {
			if n := f.Cuts[p]; n > 0 {
				what := fmt.Sprintf("%d ranges", n)
				if p == space.PolicyCompress {
					what = "-> " + termsafe.String(f.OutPath)
				}
				fmt.Fprintf(w, "  %-24s %s\n", p, what)
			}
			if why, ok := f.Skipped[p]; ok {
				fmt.Fprintf(w, "  %-24s skipped: %s\n", p, termsafe.String(why))
			}
		}
		if f.StateDiff != "" {
			fmt.Fprintf(w, "  state diff (-old +new):\n%s", indent(termsafe.Lines(f.StateDiff), "    "))
		}
		for _, nf := range f.NewFindings {
			fmt.Fprintf(w, "  new finding: %s\n", termsafe.String(fmt.Sprint(nf)))
		}
		if pp := f.Projection; pp != nil {
			if pp.Deleted {
				fmt.Fprintf(w, "  deleted Codex's projection of thread %s (%d items, %d turns) from %s: Codex projects it again from the file; reclaim --undo puts it back\n",
					pp.ThreadID, pp.Items, pp.Turns, termsafe.String(pp.DB))
			} else if f.Refused == "" && f.Error == "" {
				fmt.Fprintf(w, "  note: Codex's projection of thread %s in %s (%d items, %d turns) was made from the file up to byte %d, and the cuts change it from byte %d on: --write deletes the projection in one transaction before it replaces the file, as Codex does before it rewrites a rollout; reclaim --undo puts the rows back\n",
					pp.ThreadID, termsafe.String(filepath.Base(pp.DB)), pp.Items, pp.Turns, pp.Cursor, pp.From)
			}
		}
	}
	mode := "dry run: nothing is written; add --write to apply"
	if o.write {
		mode = fmt.Sprintf("%d files written; undo with rollout reclaim --undo FILE", written)
	}
	fmt.Fprintf(w, "%d files, %s -> %s (+ %s in archives), frees %s (%s)\n", len(files), report.Size(before), report.Size(after), report.Size(archived), report.Size(before-after), mode)
	if refused > 0 {
		fmt.Fprintf(w, "%d files refused\n", refused)
	}
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

func runReclaimUndo(a *app, o *reclaimOptions) error {
	code := exitOK
	for _, p := range o.paths {
		res, err := reclaim.Undo(p, reclaim.UndoOptions{Force: o.opts.Force, Stage: o.opts.Stage})
		if err != nil {
			reportError(a.io, &exitError{code: exitUnsafe, err: err})
			code = exitUnsafe
			if res == nil {
				continue
			}
		}
		note := ""
		if res.Resumed {
			note = " (an undo stopped after its rename, finished)"
		}
		fmt.Fprintf(a.io.Out, "%s: restored from %s (%d ranges put back); removed %s%s\n",
			termsafe.String(res.Path), termsafe.String(res.From), res.Restored, termsafe.String(res.Archive), note)
		if res.Projection {
			fmt.Fprintf(a.io.Out, "put back Codex's projection of the thread reclaim had deleted\n")
		}
		if res.Late != nil {
			reportError(a.io, lateError(res.Late))
			code = exitUnsafe
		}
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}
