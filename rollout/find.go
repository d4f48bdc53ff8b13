package rollout

import (
	"strings"
)

// ThreadMatch is a rollout that belongs to a thread searched for.
type ThreadMatch struct {
	Path string
	// ThreadID is the thread's id: the session_meta's when the file has one,
	// otherwise the one in the file name.
	ThreadID string
	NameID   string // the id in the file name ("" when none)
	MetaID   string // session_meta's id ("" when none was read)
	// Indexed: found through Codex's threads table (state_N.sqlite), not
	// by reading the file.
	Indexed bool
}

// FindThreads lists the rollouts among paths (already discovered files)
// whose thread id, from the file name or from session_meta, is query or
// starts with it (case-insensitive). A file that cannot be opened is
// skipped: it cannot be told to belong to the thread.
func FindThreads(paths []string, query string) []ThreadMatch {
	query = strings.ToLower(query)
	var out []ThreadMatch
	for _, p := range paths {
		m := ThreadMatch{Path: p}
		m.NameID, _ = ThreadIDFromName(p)
		m.MetaID = MetaThreadID(p)
		m.ThreadID = m.MetaID
		if m.ThreadID == "" {
			m.ThreadID = m.NameID
		}
		if strings.HasPrefix(m.NameID, query) || strings.HasPrefix(strings.ToLower(m.MetaID), query) {
			out = append(out, m)
		}
	}
	return out
}
