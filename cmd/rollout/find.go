package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/home"
	"github.com/rollout-dev/rollout/internal/termsafe"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/spf13/cobra"
)

type findOptions struct {
	query string
	long  bool
}

func newFindCmd(a *app, runF func(context.Context, *findOptions) error) *cobra.Command {
	opts := &findOptions{}
	cmd := &cobra.Command{
		Use:   "find THREAD_ID|PREFIX",
		Short: "Print the rollout file(s) of a thread",
		Long: `find looks through $CODEX_HOME/sessions and $CODEX_HOME/archived_sessions
(CODEX_HOME defaults to ~/.codex) for the rollouts of a thread: those whose file
name or session_meta carries the thread id, or an id starting with PREFIX. It
prints one path per line (sessions, then archived_sessions, each sorted), so
that its output can be passed to other commands. verify, state, repair and
diff take --thread ID to do the same.

Exit codes: 0 when some rollout matched, 2 when none did.`,
		Example: `  rollout find 019cd719-fabd-7808-8020-00009e3779b2
  rollout find --long 019cd7
  rollout verify $(rollout find 019cd719)`,
		Args: argsExactly(1, "a thread id or a prefix of one"),
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
	cmd.Flags().BoolVarP(&opts.long, "long", "l", false, "also print the thread id and where it was found (file name, session_meta)")
	return cmd
}

func runFind(ctx context.Context, a *app, o *findOptions) error {
	matches, dirs, err := findThread(o.query)
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return noThreadError(o.query, dirs)
	}
	for _, m := range matches {
		if !o.long {
			fmt.Fprintln(a.io.Out, termsafe.String(m.Path))
			continue
		}
		fmt.Fprintf(a.io.Out, "%s\t%s\t%s\n", termsafe.String(m.Path), termsafe.String(m.ThreadID), matchSource(m, o.query))
	}
	return nil
}

// matchSource says which of the file name and session_meta carry the id.
func matchSource(m rollout.ThreadMatch, query string) string {
	q := strings.ToLower(query)
	var by []string
	if m.Indexed {
		by = append(by, "threads")
	}
	if m.NameID != "" && strings.HasPrefix(m.NameID, q) {
		by = append(by, "name")
	}
	if m.MetaID != "" && strings.HasPrefix(strings.ToLower(m.MetaID), q) {
		by = append(by, "session_meta")
	}
	if m.MetaID != "" && m.NameID != "" && !strings.EqualFold(m.MetaID, m.NameID) {
		by = append(by, "(name and session_meta disagree)")
	}
	return strings.Join(by, ",")
}

// codexHome is $CODEX_HOME, or ~/.codex.
func codexHome() (string, error) {
	if home := os.Getenv("CODEX_HOME"); home != "" {
		return home, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", usageError("set CODEX_HOME or name a path", "no home directory: %v", err)
	}
	return filepath.Join(h, ".codex"), nil
}

// codexDirs are the directories Codex keeps rollouts in, existing or not.
func codexDirs() ([]string, error) {
	home, err := codexHome()
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(home, "sessions"), filepath.Join(home, "archived_sessions")}, nil
}

// findThread resolves a thread id or prefix among the Codex directories:
// through Codex's threads table when the home has one and it names
// existing files of the home, else by the file names and session_meta of
// every rollout.
func findThread(query string) ([]rollout.ThreadMatch, []string, error) {
	dirs, err := codexDirs()
	if err != nil {
		return nil, nil, err
	}
	if m := indexedThreads(filepath.Dir(dirs[0]), query); len(m) > 0 {
		return m, dirs, nil
	}
	var files []string
	for _, d := range dirs {
		if !fileExists(d) {
			continue
		}
		found, err := rollout.Discover([]string{d})
		if errors.Is(err, rollout.ErrNoRollouts) {
			continue
		}
		if err != nil {
			return nil, dirs, &exitError{code: exitUsage, err: err}
		}
		files = append(files, found.Paths...)
	}
	return rollout.FindThreads(files, query), dirs, nil
}

func noThreadError(query string, dirs []string) error {
	return usageError("set CODEX_HOME to the directory that holds sessions/, or name the file",
		"no rollout of thread %q in %s or %s", query, dirs[0], dirs[1])
}

// resolveThread is --thread ID: the one rollout of that thread.
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

// indexedThreads are the rollouts Codex's threads table names for the
// threads matching query: nil when the home has no readable table, or a
// row names a file that is missing or outside the home (the walk then
// decides, as Codex falls back to file names).
func indexedThreads(dir, query string) []rollout.ThreadMatch {
	h := home.New(dir)
	path := h.StateDB()
	if path == "" {
		return nil
	}
	d, err := home.OpenDB(path)
	if err != nil {
		return nil
	}
	defer d.Close()
	rows, err := home.ThreadsByPrefix(d, query)
	if err != nil || len(rows) == 0 {
		return nil
	}
	out := make([]rollout.ThreadMatch, 0, len(rows))
	for _, t := range rows {
		if !h.Contains(t.RolloutPath) || !fileExists(t.RolloutPath) {
			return nil
		}
		m := rollout.ThreadMatch{Path: t.RolloutPath, ThreadID: t.ID, Indexed: true}
		m.NameID, _ = rollout.ThreadIDFromName(t.RolloutPath)
		out = append(out, m)
	}
	// sessions, then archived_sessions, each sorted, as the walk prints them
	sort.SliceStable(out, func(i, j int) bool {
		ai, aj := strings.Contains(out[i].Path, "/"+home.ArchivedSessionsDir+"/"), strings.Contains(out[j].Path, "/"+home.ArchivedSessionsDir+"/")
		if ai != aj {
			return aj
		}
		return out[i].Path < out[j].Path
	})
	return out
}
