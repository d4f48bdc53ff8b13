package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// Default is the directory of the Codex home a command reads when it is
// named no path: $CODEX_HOME as set, else ~/.codex.
func Default() (string, error) {
	if dir := os.Getenv("CODEX_HOME"); dir != "" {
		return dir, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory: %w", err)
	}
	return filepath.Join(h, ".codex"), nil
}

// RolloutDirs are the directories Codex keeps rollouts in, existing or
// not: sessions/, then archived_sessions/.
func (h *Home) RolloutDirs() []string {
	return []string{filepath.Join(h.Dir, SessionsDir), filepath.Join(h.Dir, ArchivedSessionsDir)}
}

// FindThread resolves a thread id or prefix among the home's rollouts:
// through Codex's threads table when the home has one and it names
// existing files of the home, else by the file names and session_meta of
// every rollout (rollout.FindThreads). The matches come as a walk lists
// them: sessions/, then archived_sessions/, each sorted. The error is a
// walk's.
func (h *Home) FindThread(query string) ([]rollout.ThreadMatch, error) {
	if m := h.indexedThreads(query); len(m) > 0 {
		return m, nil
	}
	var files []string
	for _, d := range h.RolloutDirs() {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		found, err := discover(d)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	return rollout.FindThreads(files, query), nil
}

// discover lists the rollouts under dir: none when it holds none
// (rollout.ErrNoRollouts).
func discover(dir string) ([]string, error) {
	d, err := rollout.Discover([]string{dir})
	if errors.Is(err, rollout.ErrNoRollouts) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return d.Paths, nil
}

// Current is the current rollout of one thread's several files: a
// reverted thread gets a new rollout per revert, and without its threads
// row Codex takes the newest file name of the thread (the name starts with
// its time; find_thread_path_by_id_str, codex-rs/rollout/src/list.rs).
// ok is false when the matches are of several threads.
func Current(matches []rollout.ThreadMatch) (path string, ok bool) {
	for _, m := range matches {
		if !strings.EqualFold(m.ThreadID, matches[0].ThreadID) || m.ThreadID == "" {
			return "", false
		}
		if path == "" || filepath.Base(m.Path) > filepath.Base(path) {
			path = m.Path
		}
	}
	return path, true
}

// indexedThreads are the rollouts Codex's threads table names for the
// threads matching query: nil when the home has no readable table, or a
// row names a file that is missing, outside the home or not a regular
// file (the walk then decides, as Codex falls back to file names; it
// skips what is not a regular file: reading a FIFO blocks for ever).
func (h *Home) indexedThreads(query string) []rollout.ThreadMatch {
	d, err := h.openStateDB()
	if d == nil || err != nil {
		return nil
	}
	defer d.Close()
	rows, err := threadsByPrefix(d, query)
	if err != nil || len(rows) == 0 {
		return nil
	}
	out := make([]rollout.ThreadMatch, 0, len(rows))
	for _, t := range rows {
		if fi, err := os.Stat(t.RolloutPath); err != nil || !fi.Mode().IsRegular() || !h.Contains(t.RolloutPath) {
			return nil
		}
		m := rollout.ThreadMatch{Path: t.RolloutPath, ThreadID: t.ID, Indexed: true}
		m.NameID, _ = rollout.ThreadIDFromName(t.RolloutPath)
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ai, aj := archived(out[i].Path), archived(out[j].Path)
		if ai != aj {
			return aj
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// archived reports whether a rollout lies under an archived_sessions/.
func archived(path string) bool {
	return strings.Contains(path, "/"+ArchivedSessionsDir+"/")
}

// MatchSource says which of the threads index, the file name and
// session_meta carry the id query matched (rollout find --long).
func MatchSource(m rollout.ThreadMatch, query string) string {
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
