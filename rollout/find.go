package rollout

import (
	"errors"
	"io"
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

// metaLinesRead bounds how far FindThreads looks for session_meta: it is the
// first line of a healthy file, and a few damaged lines may precede it.
const metaLinesRead = 8

// metaMaxLine bounds the line FindThreads reads: session_meta carries the
// base instructions (tens of KB), never megabytes.
const metaMaxLine = 4 << 20

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
		m.MetaID = metaThreadID(p)
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

// MetaThreadID is the thread id of the session_meta near the top of the
// rollout at path ("" when none is read).
func MetaThreadID(path string) string { return metaThreadID(path) }

// metaThreadID reads the thread id from the session_meta near the top of a
// rollout (envelope era: payload.id; bare era: the first line's id).
func metaThreadID(path string) string {
	f, err := Open(path, nil)
	if err != nil {
		return ""
	}
	defer f.Close()
	rd := NewReader(f, metaMaxLine)
	for range metaLinesRead {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) || err != nil {
			return ""
		}
		if !rec.Valid() {
			continue
		}
		switch DetectEra(rec) {
		case EraEnvelope:
			if rec.Type() == TypeSessionMeta {
				return rec.Payload().Get("id").String()
			}
		case EraBare:
			return rec.Get("id").String()
		default:
			return ""
		}
	}
	return ""
}
