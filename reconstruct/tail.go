package reconstruct

import "github.com/rollout-dev/rollout/rollout"

// The unknown tail of a paginated file. When Codex resumes a paginated
// rollout it takes the next ordinal from the last record it can read,
// scanning back from the end and skipping every line that does not
// deserialize as a RolloutLine (ordinal_state_for_rollout,
// codex-rs/rollout/src/ordinal.rs, in every version with paginated
// history: openai/codex#32332 added ordinals in 0.145). A complete last
// record of a type that version does not know is skipped, so the next
// append reuses its ordinal: a duplicate that stalls the thread's history
// projection (openai/codex#44417, #44440, still open in September 2026;
// #43142 on 0.153.4). Which version reads which line type is the quirks
// table's (lineTypeSince, quirks.go).

// readNever are line types rollout knows that Codex does not.
var readNever = map[string]bool{rollout.TypeContextHandoff: true}

// unknownTail is the run of records at the end of the file the file's
// Codex version cannot read, as far as it is known.
type unknownTail struct {
	pos   Pos
	typ   string
	since string // the first version that reads typ ("": none)
}

// noteTail follows the end of a paginated file: a record of a type the
// file's Codex version reads ends the unreadable run, one it does not
// starts it (or continues it). Lines that are not records (blank, torn,
// invalid) are skipped by Codex's scan too and leave the run as it is.
func (e *engine) noteTail(pos Pos, typ string, ord int64, hasOrd bool) {
	if e.st.HistoryMode != rollout.HistoryPaginated {
		return
	}
	known, since := e.reads(typ)
	if known {
		e.tail = nil
		if hasOrd {
			setLast(&e.lastReadOrd, ord)
		}
		return
	}
	if e.tail == nil {
		e.tail = &unknownTail{pos: pos, typ: typ, since: since}
	}
}

// reads reports whether the file's Codex version reads line type typ, and
// the first version that does ("" when none does).
func (e *engine) reads(typ string) (bool, string) {
	if readNever[typ] || !rollout.KnownLineType(typ) {
		return false, ""
	}
	since, newer := lineTypeSince[typ]
	if !newer {
		return true, ""
	}
	v, ok := rollout.ParseVersion(e.st.ResumeVersion())
	if !ok {
		return true, since.String() // unknown version: assume one that reads it
	}
	return v.AtLeast(since), since.String()
}

// judgeTail reports the unreadable run at the end of the file.
func (e *engine) judgeTail() {
	t := e.tail
	if t == nil {
		return
	}
	ev := OrdinalUnknownTailEvidence{Type: t.typ, CLIVersion: e.st.ResumeVersion(), ReadSince: t.since}
	if e.lastReadOrd != nil {
		next := *e.lastReadOrd + 1
		ev.NextOrdinal = &next
	}
	if t.pos.Ordinal != nil {
		ord := *t.pos.Ordinal
		ev.Ordinal = &ord
	}
	e.emit(t.pos, ev)
}
