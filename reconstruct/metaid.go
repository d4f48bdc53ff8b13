package reconstruct

import (
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// An edited session_meta id: the file name says one thread, session_meta
// another. Which one the file's records (payload.thread_id) agree with
// decides whether the meta was edited (the name and the records agree) or
// the file renamed; so the finding waits for the end of the file.

// metaIDCheck is a file-name/session_meta mismatch awaiting the records.
type metaIDCheck struct {
	pos              Pos
	ev               MetaFilenameMismatchEvidence
	fileLow, metaLow string
	pending          bool
}

// noteMetaID counts, while a mismatch is pending, the records that name
// the file name's thread and those that name session_meta's.
func (e *engine) noteMetaID(rec *rollout.Record, typ string) {
	m := &e.metaID
	if !m.pending || typ == rollout.TypeSessionMeta {
		return
	}
	t := rec.Payload().Get("thread_id").String()
	switch strings.ToLower(t) {
	case "":
	case m.fileLow:
		m.ev.RecordsWithFileID++
	case m.metaLow:
		m.ev.RecordsWithPayloadID++
	}
}

// finishMetaID reports the pending mismatch with the counts.
func (e *engine) finishMetaID() {
	if m := &e.metaID; m.pending {
		m.pending = false
		m.ev.Paginated = e.st.HistoryMode == rollout.HistoryPaginated
		e.emit(m.pos, m.ev)
	}
}
