package main

import (
	"context"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/codex/manifest"
)

type planOptions struct {
	inputFlags
	output string
	jobs   int
}

func newPlanCmd(a *app) *cobra.Command {
	opts := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan [SOURCE...] -o MANIFEST",
		Short: "List a fleet's rollouts once, for sharded runs (--manifest)",
		Long: `plan lists the rollouts under each SOURCE (a directory, a file, or object
storage: s3://BUCKET/PREFIX; without one, the Codex home) and reads the head of each once: size, version
(ETag or modification time), thread and rollout ids, cli_version, and the
root of its lineage. verify, simulate-budget and space read the manifest with
--manifest FILE --shard K/N: each shard reads only its slice, lineages whole,
and opens nothing else to find them (docs/scale.md).

The manifest is JSON Lines: a header, then one entry per rollout.

Exit codes: 0 written; 2 a SOURCE cannot be listed.`,
		Example: `  rollout plan s3://archive/sessions/ -o manifest.jsonl
  rollout verify --manifest manifest.jsonl --shard 3/64 --format json=verify-3.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			if opts.jobs < 1 {
				return usageError("use --jobs 1 or more", "invalid --jobs %d", opts.jobs)
			}
			return runPlan(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	addOutput(f, &opts.output, "the manifest")
	opts.addFilesFrom(f)
	// Head reads wait on the store's latency: many at a time.
	f.IntVar(&opts.jobs, "jobs", 8*runtime.NumCPU(), "heads read at a time")
	return cmd
}

func runPlan(ctx context.Context, a *app, o *planOptions) error {
	paths, err := o.named(a)
	if err != nil {
		return err
	}
	if err := checkOutputsOf(paths, o.output); err != nil {
		return err
	}
	sel, err := lineage.Select(paths, nil)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	for _, n := range sel.Notes() {
		printf(a.io.Err, "note: %s", n)
	}
	entries := manifest.Plan(ctx, sel.Paths, o.jobs)
	err = writeOutput(a, o.output, "the manifest", func(w io.Writer) error {
		return manifest.Write(w, paths, entries)
	})
	if err != nil {
		return err
	}
	lineages, unreadable := manifest.Tally(entries)
	printf(a.io.Err, "planned %d rollouts in %d lineages; %d heads unreadable (verify reports them)", len(entries), lineages, unreadable)
	return nil
}
