package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
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
that its output can be passed to other commands. A thread is a lineage of
rollouts: after its own, find prints the rollouts they continue (a fork's
parent, a reverted thread's earlier rollouts, each once, nearest first). verify,
state, repair and diff take --thread ID to read the thread's current rollout
(the one Codex's threads table names, else the newest by name).

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
	cmd.Flags().BoolVarP(&opts.long, "long", "l", false, "also print the thread id and where it was found (file name, session_meta; or the lineage that leads to it)")
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
	for _, m := range withLineage(matches, dirs) {
		if !o.long {
			fmt.Fprintln(a.io.Out, termsafe.String(m.Path))
			continue
		}
		source := m.lineage
		if source == "" {
			source = matchSource(m.ThreadMatch, o.query)
		}
		if m.current {
			source += " (the thread's current rollout)"
		}
		fmt.Fprintf(a.io.Out, "%s\t%s\t%s\n", termsafe.String(m.Path), termsafe.String(m.ThreadID), source)
	}
	return nil
}

// found is a rollout find prints: a match, or a rollout a match continues.
type found struct {
	rollout.ThreadMatch
	lineage string // for a rollout of the lineage: which rollout continues it, up to where
	current bool   // the current rollout of a thread that has several
}

// withLineage is matches, a thread's current rollout first when it has
// several (a reverted thread), each followed by the rollouts of its
// lineage (nearest first) not printed yet: the threads' predecessors,
// looked up in the Codex home as Codex does.
func withLineage(matches []rollout.ThreadMatch, dirs []string) []found {
	var paths []string
	byThread := map[string][]rollout.ThreadMatch{}
	var threads []string
	for _, m := range matches {
		paths = append(paths, m.Path)
		t := strings.ToLower(m.ThreadID)
		if _, ok := byThread[t]; !ok {
			threads = append(threads, t)
		}
		byThread[t] = append(byThread[t], m)
	}
	ordered := matches[:0:0]
	current := map[string]bool{}
	for _, t := range threads {
		ms := byThread[t]
		if cur, ok := currentRollout(ms); ok && len(ms) > 1 {
			current[cur] = true
			for _, m := range ms {
				if m.Path == cur {
					ordered = append(ordered, m)
				}
			}
			for _, m := range ms {
				if m.Path != cur {
					ordered = append(ordered, m)
				}
			}
			continue
		}
		ordered = append(ordered, ms...)
	}
	ix := lineage.New(paths, dirs...)
	seen := map[string]bool{}
	for _, m := range matches {
		seen[m.Path] = true
	}
	var out []found
	for _, m := range ordered {
		f := found{ThreadMatch: m}
		if current[m.Path] {
			f.current = true
		}
		out = append(out, f)
		c := ix.Resolve(m.Path)
		for i := 1; i < len(c.Links); i++ {
			r := c.Links[i]
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			meta, _ := r.Meta()
			child, _ := c.Links[i-1].Meta()
			out = append(out, found{ThreadMatch: rollout.ThreadMatch{Path: r.Path, ThreadID: meta.ThreadID, NameID: r.Name.Thread, MetaID: meta.ThreadID},
				lineage: fmt.Sprintf("lineage: rollout %s continues it up to byte %d", c.Links[i-1].ID, child.Base.EndOffset)})
		}
	}
	return out
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
	if p, ok := currentRollout(matches); ok {
		return p, nil
	}
	var paths []string
	for _, m := range matches {
		paths = append(paths, m.Path)
	}
	return "", usageError("give more of the id, or name the file: "+strings.Join(paths, ", "),
		"--thread %s matches %d rollouts", id, len(matches))
}

// currentRollout is the current rollout of one thread's several files: a
// reverted thread gets a new rollout per revert, and without its threads
// row Codex takes the newest file name of the thread (the name starts with
// its time; find_thread_path_by_id_str, codex-rs/rollout/src/list.rs).
// ok is false when the matches are of several threads.
func currentRollout(matches []rollout.ThreadMatch) (string, bool) {
	best := ""
	for _, m := range matches {
		if !strings.EqualFold(m.ThreadID, matches[0].ThreadID) || m.ThreadID == "" {
			return "", false
		}
		if b := filepath.Base(m.Path); best == "" || b > filepath.Base(best) {
			best = m.Path
		}
	}
	return best, true
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
