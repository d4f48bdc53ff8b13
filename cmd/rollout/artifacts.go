package main

import (
	"context"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/sweep"
	"github.com/rollout-dev/rollout/internal/output/report"
)

type artifactsOptions struct {
	paths  []string
	move   bool
	remove bool
}

func newArtifactsCmd(a *app, runF func(context.Context, *artifactsOptions) error) *cobra.Command {
	o := &artifactsOptions{}
	cmd := &cobra.Command{
		Use:   "artifacts [HOME|FILE...]",
		Short: "List, move out of Codex's trees, or remove what repair and reclaim left behind",
		Long: `artifacts lists what repair and reclaim keep for a rollout: backups
(FILE.bak[.N]), quarantines, undo records, reclaim archives, bytes an agent
appended while a file was replaced (FILE.late[.N]) and temporary files a killed
write left. For a Codex home (the default is $CODEX_HOME, ~/.codex) that is
every file of $CODEX_HOME/rollout-artifacts/, plus the strays older versions of
rollout left inside sessions/ and archived_sessions/, where Codex may take them
for sessions (Codex 0.58 resumed FILE.repair-undo.json). For a FILE, its own.

--move moves the strays to the store, where repair --undo and reclaim --undo
find them (a temporary file is removed instead); a name already taken there is
left alone and reported. --remove deletes every artifact listed: after it, no
undo is possible. Each rollout's files are moved or removed holding its lock
(a repair or reclaim of it running: skipped, exit 4).`,
		Example: `  rollout artifacts                      # what is in ~/.codex
  rollout artifacts --move ~/.codex      # strays out of sessions/ and archived_sessions/
  rollout artifacts --remove ~/.codex/sessions/2026/03/10/rollout-…jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			if o.move && o.remove {
				return usageError("choose one", "--move and --remove exclude each other")
			}
			if len(o.paths) == 0 {
				home, err := codexHome()
				if err != nil {
					return err
				}
				o.paths = []string{home}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runArtifacts(a, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.move, "move", false, "move artifacts found inside sessions/ and archived_sessions/ to $CODEX_HOME/rollout-artifacts/")
	f.BoolVar(&o.remove, "remove", false, "delete every artifact listed (no undo is possible after it)")
	return cmd
}

func runArtifacts(a *app, o *artifactsOptions) error {
	found, err := scanArtifacts(o.paths)
	if err != nil {
		return err
	}
	if err := report.WriteArtifacts(a.io.Out, found); err != nil {
		return err
	}
	if !o.move && !o.remove {
		return nil
	}
	if o.move && !slices.ContainsFunc(found, func(f artifacts.Found) bool { return f.Stray }) {
		return report.WriteNothingToMove(a.io.Out)
	}
	if len(found) == 0 {
		return nil
	}
	res := sweep.Move(found, o.remove)
	var status exitStatus
	for _, err := range res.Errors {
		reportError(a.io, &exitError{code: exitUnsafe, err: err})
		status.raise(exitUnsafe)
	}
	if err := report.WriteArtifactsMoved(a.io.Out, res.Done, o.remove); err != nil {
		return err
	}
	return status.err()
}

// scanArtifacts lists the artifacts of each path: a directory's (a Codex
// home, its store and its trees) or a rollout's.
func scanArtifacts(paths []string) ([]artifacts.Found, error) {
	var found []artifacts.Found
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		var fs []artifacts.Found
		if fi.IsDir() {
			fs, err = artifacts.Scan(p)
		} else {
			fs, err = artifacts.OfFile(p)
		}
		if err != nil {
			return nil, &exitError{code: exitIncomplete, err: err}
		}
		found = append(found, fs...)
	}
	return found, nil
}
