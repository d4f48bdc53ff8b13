package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

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
record of each handoff.`,
		Example: `  rollout state fixtures/clean/envelope-paginated.jsonl
  rollout state --at-line 12 rollout.jsonl | jq .history`,
		Args: argsAtMost(1, "one FILE (or --thread ID)"),
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
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runState(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().IntVar(&opts.atLine, "at-line", 0, "stop the replay after line N")
	opts.addMaxLineBytes(cmd.Flags(), "longer lines are not replayed")
	opts.addForce(cmd.Flags(), forceReadFile)
	addThreadFlag(cmd.Flags(), &opts.thread, "read")
	addOutput(cmd.Flags(), &opts.output, "the state")
	return cmd
}

func runState(ctx context.Context, a *app, o *stateOptions) error {
	if o.path == rollout.StdinPath {
		a.io.stdinHint("a rollout")
	}
	outs, err := parseOutputs(report.DocState, nil, o.output)
	if err != nil {
		return err
	}
	if err := checkOutputsOf([]string{o.path}, outs[0].file); err != nil {
		return err
	}
	lin := lineagesOfFile(o.path)
	ro := o.replayOptions(o.path, lin)
	ro.StopAfterLine = o.atLine
	st, err := reconstruct.ReplayFile(o.path, a.io.In, ro)
	if err != nil {
		return err
	}
	lin.sayNotes(a)
	doc := report.StateDoc{Path: o.path, View: stateview.Of(st)}
	return writeOutput(a, outs[0].file, "the state", func(w io.Writer) error {
		return report.Write(w, report.DocState, outs[0].name, doc)
	})
}
