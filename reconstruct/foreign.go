package reconstruct

import (
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// Records of another rollout in a paginated file (a bad merge appending a
// sub-agent's or another thread's lines): their ordinals restart below the
// file's, and they carry another thread's id (payload.thread_id). Turn ids
// alone do not decide: lines of the file's own moved before their turn's
// start look the same. Codex resumes such a file and sends them as this thread's
// history (conformance golden corrupt/foreign-records), so renumbering
// them would adopt them: they are reported as one run, for quarantine.

// OrdinalForeignEvidence is the evidence of ordinal/foreign-records: the
// run of lines from the finding's line to Through, whose ordinals restart
// at First after After and go on by one, holds records of another rollout:
// one carries ThreadID, another thread's id (neither the file's nor its
// parent's).
type OrdinalForeignEvidence struct {
	After    int64  `json:"after"`
	First    int64  `json:"first"`
	Records  int    `json:"records"`
	Through  int    `json:"through_line"`
	ThreadID string `json:"thread_id"`
}

var ordinalForeign = newKind()

func (OrdinalForeignEvidence) Kind() Kind { return ordinalForeign }

// foreignRun is a run of lines whose ordinals restarted, being judged.
type foreignRun struct {
	active      bool
	start       Pos
	after, next int64
	last        int // line of its last record
	records     int
	threadID    string
}

// noteForeign is called for each object before its ordinal is checked:
// a line whose ordinal goes backwards starts a run, which lasts while the
// next lines go on by one.
func (e *engine) noteForeign(rec *rollout.Record, pos Pos) {
	r := &e.foreign
	if e.st.HistoryMode != rollout.HistoryPaginated || !e.metaSeen || pos.Segment != 0 || pos.Ordinal == nil || !e.whole {
		e.endForeign()
		return
	}
	got := *pos.Ordinal
	if r.active && got == r.next && pos.Line == r.last+1 {
		r.next, r.last = got+1, pos.Line
		r.records++
		e.judgeForeign(rec)
		return
	}
	e.endForeign()
	if e.lastOrd == nil || got >= *e.lastOrd {
		return
	}
	*r = foreignRun{active: true, start: pos, after: *e.lastOrd, next: got + 1, last: pos.Line, records: 1}
	e.judgeForeign(rec)
}

// judgeForeign looks for another thread's id in one record of the run
// (only runs pay for the look-up).
func (e *engine) judgeForeign(rec *rollout.Record) {
	r := &e.foreign
	p := rec.Payload()
	if r.threadID == "" {
		if t := p.Get("thread_id").String(); t != "" && !strings.EqualFold(t, e.st.ThreadID) && !strings.EqualFold(t, e.st.ParentThreadID) {
			r.threadID = t
		}
	}
}

// endForeign reports the run that ended, when it held another rollout's
// records.
func (e *engine) endForeign() {
	r := &e.foreign
	if !r.active {
		return
	}
	if r.threadID != "" {
		e.emit(r.start, OrdinalForeignEvidence{After: r.after, First: *r.start.Ordinal, Records: r.records, Through: r.last, ThreadID: r.threadID})
	}
	*r = foreignRun{}
}
