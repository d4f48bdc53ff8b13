package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/codex/manifest"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/rollout"
)

type findOptions struct {
	query    string
	long     bool
	manifest string
}

func newFindCmd(a *app, runF func(context.Context, *findOptions) error) *cobra.Command {
	opts := &findOptions{}
	cmd := &cobra.Command{
		Use:   "find THREAD_ID|PREFIX",
		Short: "Print the rollout file(s) of a thread",
		Long: `find looks through $CODEX_HOME/sessions and $CODEX_HOME/archived_sessions
(CODEX_HOME defaults to ~/.codex), or with --manifest through the rollouts a
manifest of rollout plan lists (a fleet's, in object storage too), for the
rollouts of a thread: those whose file
name or session_meta carries the thread id, or an id starting with PREFIX. It
prints one path per line (sessions, then archived_sessions, each sorted), so
that its output can be passed to other commands. A thread is a lineage of
rollouts: after its own, find prints the rollouts they continue (a fork's
parent, a reverted thread's earlier rollouts, each once, nearest first), then
those of the threads attached to it as side conversations and, for an attached
thread, its parent's (Codex's threads table: attached_thread_parent_id). verify,
state, repair and diff take --thread ID to read the thread's current rollout
(the one Codex's threads table names, else the newest by name).

Exit codes: 0 when some rollout matched, 2 when none did.`,
		Example: `  rollout find 019cd719-fabd-7808-8020-00009e3779b2
  rollout find --long 019cd7
  rollout verify $(rollout find 019cd719)`,
		Args: argsBetween(1, 1, "a thread id or a prefix of one"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.query = args[0]
			if strings.TrimSpace(opts.query) == "" {
				return usageError("give a thread id or the first characters of one", "empty thread id")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runFind(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.manifest, "manifest", "", "look in the rollouts the manifest `FILE` lists (rollout plan; a file or an s3:// object) instead of $CODEX_HOME")
	cmd.Flags().BoolVarP(&opts.long, "long", "l", false, "also print the thread id and where it was found (file name, session_meta; or the lineage that leads to it)")
	return cmd
}

func runFind(ctx context.Context, a *app, o *findOptions) error {
	found, err := findFound(a, o)
	if err != nil {
		return err
	}
	for _, m := range found {
		if !o.long {
			fmt.Fprintln(a.io.Out, termsafe.String(m.Path))
			continue
		}
		source := home.MatchSource(m.ThreadMatch, o.query)
		if m.Inherited {
			source = fmt.Sprintf("lineage: rollout %s continues it up to byte %d", m.ContinuedBy, m.UpTo)
		}
		if att := m.Attachment(); m.ViaAttachment {
			source = att
		} else if att != "" {
			source += " (" + att + ")"
		}
		if m.Current {
			source += " (the thread's current rollout)"
		}
		fmt.Fprintf(a.io.Out, "%s\t%s\t%s\n", termsafe.String(m.Path), termsafe.String(m.ThreadID), source)
	}
	return nil
}

// findFound are the rollouts of the thread and their lineages: in the
// manifest, else in the default home.
func findFound(a *app, o *findOptions) ([]lineage.Found, error) {
	if o.manifest != "" {
		_, entries, err := manifest.Read(o.manifest, a.io.In, nil)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		matches := manifest.FindThread(entries, o.query)
		if len(matches) == 0 {
			return nil, usageError("plan the rollouts that hold it, or look in another manifest",
				"no rollout of thread %q in %s", o.query, o.manifest)
		}
		return lineage.ExpandIn(manifest.Index(entries), matches), nil
	}
	matches, dirs, err := findThread(o.query)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, noThreadError(o.query, dirs)
	}
	return lineage.WithAttached(lineage.Expand(matches, dirs), home.New(filepath.Dir(dirs[0]))), nil
}

// codexHome is the default Codex home's directory (home.Default).
func codexHome() (string, error) {
	dir, err := home.Default()
	if err != nil {
		return "", usageError("set CODEX_HOME or name a path", "%v", err)
	}
	return dir, nil
}

// codexDirs are the directories of the default home that Codex keeps
// rollouts in, existing or not.
func codexDirs() ([]string, error) {
	dir, err := codexHome()
	if err != nil {
		return nil, err
	}
	return home.New(dir).RolloutDirs(), nil
}

// findThread resolves a thread id or prefix in the default home
// (home.FindThread); dirs are where it looked.
func findThread(query string) (matches []rollout.ThreadMatch, dirs []string, err error) {
	dir, err := codexHome()
	if err != nil {
		return nil, nil, err
	}
	h := home.New(dir)
	dirs = h.RolloutDirs()
	matches, err = h.FindThread(query)
	if err != nil {
		return nil, dirs, &exitError{code: exitUsage, err: err}
	}
	return matches, dirs, nil
}

// noThreadError: no rollout of the thread; when a fork still continues
// it, the thread's rollout was deleted and the hint names the fork.
func noThreadError(query string, dirs []string) error {
	hint := "set CODEX_HOME to the directory that holds sessions/, or name the file"
	if refs := lineage.ForHome(filepath.Dir(dirs[0])).ReferencedBy(query); len(refs) > 0 {
		hint = "it was deleted or moved out of the home, and " + termsafe.String(refs[0].Path) +
			" continues it: that thread cannot be resumed without it (lineage/missing-source); put it back from a backup"
	}
	return usageError(hint, "no rollout of thread %q in %s or %s", query, dirs[0], dirs[1])
}

// resolveThread is --thread ID: the one rollout of that thread, its
// current one when it has several (a reverted thread).
func resolveThread(id string) (string, error) {
	matches, dirs, err := findThread(id)
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", noThreadError(id, dirs)
	case 1:
		return matches[0].Path, nil
	}
	if p, ok := home.Current(matches); ok {
		return p, nil
	}
	var paths []string
	for _, m := range matches {
		paths = append(paths, m.Path)
	}
	return "", usageError("give more of the id, or name the file: "+strings.Join(paths, ", "),
		"--thread %s matches %d rollouts", id, len(matches))
}

// resolveThreads resolves every --thread value, in order.
func resolveThreads(ids []string) ([]string, error) {
	var paths []string
	for _, id := range ids {
		p, err := resolveThread(id)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// fileOrThread is the one input of a single-file command: FILE, or the
// rollout --thread ID names, not both.
func fileOrThread(cmd *cobra.Command, args []string, thread string) (string, error) {
	switch {
	case thread != "" && len(args) > 0:
		return "", usageError("usage: "+cmd.UseLine(), "give FILE or --thread %s, not both", thread)
	case thread != "":
		return resolveThread(thread)
	case len(args) == 1:
		return args[0], nil
	}
	return "", argCountError(cmd, args, "one FILE (or --thread ID)")
}
