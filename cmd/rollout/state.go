package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

type stateOptions struct {
	path   string
	atLine int
	replayFlags
	thread string
	output string
	items  bool
	codex  string
}

func newStateCmd(a *app, runF func(context.Context, *stateOptions) error) *cobra.Command {
	opts := &stateOptions{}
	cmd := &cobra.Command{
		Use:   "state FILE",
		Short: "Print the reconstructed thread state as JSON",
		Long: `state replays a rollout as resume does and prints the result: thread id, era,
history mode, turns (ids, status, whether rolled back), the live history (item
ids and types in order; a fork's or revert's inherited part first, read from the
rollouts it continues, found beside the file or in its Codex home), the world-state baseline, the context-window lineage,
the restored token usage, the settings resume restores for the next turn (from
the newest turn_context, or a later compaction's resume_metadata) and the latest
record of each handoff.

--items prints instead what Codex sends on resume: the input items of its first
request that it rebuilds from the rollout, each exactly as Codex sends it
(fields it keeps only in the file left out, the items it makes itself, such as
a legacy compaction's summary or an "aborted" output, put in). The request starts
with session_meta's base instructions in newer versions and ends with the new
turn; neither is from the rollout. --codex-version V replays the file as Codex V
resumes it, for the state and the items (default: the version that wrote it).`,
		Example: `  rollout state fixtures/clean/envelope-paginated.jsonl
  rollout state --at-line 12 rollout.jsonl | jq .history
  rollout state --items --codex-version 0.58.0 rollout.jsonl | jq '.items[]|.type'`,
		Args: argsBetween(0, 1, "one FILE (or --thread ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := fileOrThread(cmd, args, opts.thread)
			if err != nil {
				return err
			}
			opts.path = path
			if err := opts.validateLimits(); err != nil {
				return err
			}
			if opts.atLine < 0 {
				return usageError("", "invalid --at-line %d", opts.atLine)
			}
			if _, ok := rollout.ParseVersion(opts.codex); opts.codex != "" && !ok {
				return usageError("a Codex release such as 0.171.0", "invalid --codex-version %q", opts.codex)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runState(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().IntVar(&opts.atLine, "at-line", 0, "stop the replay after line N")
	cmd.Flags().BoolVar(&opts.items, "items", false, "print the input items Codex sends on resume instead of the state")
	cmd.Flags().StringVar(&opts.codex, "codex-version", "", "replay as Codex `VERSION` resumes the file (default: the version that wrote it)")
	opts.addMaxLineBytes(cmd.Flags(), "longer lines are not replayed")
	opts.addForce(cmd.Flags(), forceReadFile)
	addThreadFlag(cmd.Flags(), &opts.thread, "read")
	addOutput(cmd.Flags(), &opts.output, "the state")
	return cmd
}

func runState(ctx context.Context, a *app, o *stateOptions) error {
	if o.path == rollout.StdinPath {
		if o.items {
			return usageError("", "%v", resumeinput.ErrStdin)
		}
		a.io.stdinHint("a rollout")
	}
	doc := report.DocState
	if o.items {
		doc = report.DocInput
	}
	outs, err := parseOutputs(doc, nil, o.output)
	if err != nil {
		return err
	}
	if err := checkOutputsOf([]string{o.path}, outs[0].file); err != nil {
		return err
	}
	lin := lineagesOfFile(o.path)
	ro := o.replayOptions(o.path, lin)
	ro.StopAfterLine = o.atLine
	ro.ResumeVersion = o.codex
	st, err := reconstruct.ReplayFile(o.path, a.io.In, ro)
	if err != nil {
		return err
	}
	lin.sayNotes(a)
	var value any = report.StateDoc{Path: o.path, View: stateview.Of(st)}
	if o.items {
		items, err := resumeinput.Items(st, o.path, resumeinput.Options{Open: ro.Open, MaxLineBytes: ro.MaxLineBytes})
		if err != nil {
			return err
		}
		value = report.InputDoc{Path: o.path, CodexVersion: st.ResumeVersion(), WriterVersion: st.CLIVersion, Items: items}
	}
	return writeOutput(a, outs[0].file, "the state", func(w io.Writer) error {
		return report.Write(w, doc, outs[0].name, value)
	})
}
