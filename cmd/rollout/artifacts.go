package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
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
	var found []artifacts.Found
	for _, p := range o.paths {
		fi, err := os.Stat(p)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		var fs []artifacts.Found
		if fi.IsDir() {
			fs, err = artifacts.Scan(p)
		} else {
			fs, err = artifacts.OfFile(p)
		}
		if err != nil {
			return &exitError{code: exitIncomplete, err: err}
		}
		found = append(found, fs...)
	}
	var status exitStatus
	var total int64
	strays := 0
	for _, f := range found {
		total += f.Size
		where := ""
		if f.Stray {
			where = "  (inside Codex's trees: rollout artifacts --move)"
			strays++
		}
		fmt.Fprintf(a.io.Out, "%-15s %10s  %s%s\n", f.Kind, report.Size(f.Size), termsafe.String(f.Path), where)
	}
	fmt.Fprintf(a.io.Out, "%s, %s", report.Count(len(found), "artifact"), report.Size(total))
	if strays > 0 {
		fmt.Fprintf(a.io.Out, "; %d inside sessions/ or archived_sessions/", strays)
	}
	if len(found) == 0 {
		fmt.Fprint(a.io.Out, ": nothing to list; repair --write and reclaim --write leave backups, quarantines, undo records and archives, and none is there")
	}
	fmt.Fprintln(a.io.Out)
	if !o.move && !o.remove {
		return nil
	}
	if o.move && strays == 0 {
		fmt.Fprintln(a.io.Out, "nothing to move: no artifact is inside sessions/ or archived_sessions/")
		return nil
	}
	if len(found) == 0 {
		return nil
	}
	// One rollout at a time, holding its lock: no repair or reclaim of it
	// is making or reading these files meanwhile.
	byRollout := map[string][]artifacts.Found{}
	var order []string
	for _, f := range found {
		if o.move && !f.Stray {
			continue
		}
		if _, ok := byRollout[f.Rollout]; !ok {
			order = append(order, f.Rollout)
		}
		byRollout[f.Rollout] = append(byRollout[f.Rollout], f)
	}
	done := 0
	for _, r := range order {
		g, err := inplace.Lock(r)
		var busy *inplace.Refusal
		if errors.As(err, &busy) {
			reportError(a.io, &exitError{code: exitUnsafe, err: err})
			status.raise(exitUnsafe)
			continue
		}
		for _, f := range byRollout[r] {
			if err := moveOrRemove(f, o.remove); err != nil {
				reportError(a.io, &exitError{code: exitUnsafe, err: err})
				status.raise(exitUnsafe)
				continue
			}
			done++
		}
		g.Release() // nil when the rollout is gone: nothing to hold
		if p, err := artifacts.For(r); err == nil {
			p.Tidy()
		}
	}
	verb := "moved to the store"
	if o.remove {
		verb = "removed"
	}
	fmt.Fprintf(a.io.Out, "%s %s\n", report.Count(done, "artifact"), verb)
	return status.err()
}

// moveOrRemove moves a stray to its rollout's place (never over a file
// there), or removes an artifact.
func moveOrRemove(f artifacts.Found, remove bool) error {
	dst, err := f.Destination()
	if remove || f.Kind == artifacts.KindTemp {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	p, err := artifacts.For(f.Rollout)
	if err != nil {
		return err
	}
	if err := p.Prepare(); err != nil {
		return err
	}
	// A hard link then the removal: the name in the store is never
	// replaced, and the file is never in neither place.
	if err := os.Link(f.Path, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %s already exists: left where it is", f.Path, dst)
		}
		return fmt.Errorf("moving %s to %s: %w", f.Path, filepath.Dir(dst), err)
	}
	return os.Remove(f.Path)
}
