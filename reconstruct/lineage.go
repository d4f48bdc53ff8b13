package reconstruct

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unique"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

// A thread is a lineage of rollouts. A paginated fork or revert does not
// repeat the history it continues: its session_meta.history_base names
// another rollout (by rollout id) and the byte offset and ordinal its
// inherited prefix ends at (HistoryPosition, codex-rs/protocol/src/
// protocol.rs). On resume Codex reads each rollout of the chain, root
// first, from after its session_meta up to the cutoff the next one names,
// then the file itself (scan_model_context_from_lineage_blocking in
// codex-rs/thread-store/src/local/model_context.rs, which scans each
// segment back from its end_byte_offset; openai/codex #34621, #35220,
// #38292; rust-v0.147.0 and later). The replay does the same forwards: it
// feeds the segments of an Ancestry to the engine, then the file.
//
// What a segment's records show is the other rollout's business: no
// observation is made at them (Pos.Segment > 0), only the file's own
// records are judged. A sub-agent's file may start with a copy of its
// parent's model context, the records before
// session_meta.subagent_history_start_ordinal ("inherited model context
// [that stays] out of child turn/item projection", SessionMeta in
// protocol.rs; LiveThread::create_with_inherited_model_context): they are
// replayed as history and judged as records of the file (ids, ordinals,
// lines), not as the sub-agent's own turns, tool calls or token counts
// (Pos.Segment InheritedRecord; budget.Collector skips them).
//
// A file with a history_base whose prefix was not replayed (its lineage
// is broken, or a rollout of it is not among the inputs) is judged without
// the facts that need the prefix (see prefixJudged): a patch without a
// baseline in the file, a rollback past its first turn, an output whose
// call is in the parent are not faults of the file.

// Ancestry is what the caller resolved of the lineage of a file: the
// rollouts it continues.
type Ancestry struct {
	// Segments are the inherited prefixes, root first, the file's own
	// parent last.
	Segments []Segment
	// Problems are what is wrong with the chain as resolved (a missing
	// source, a cycle, ...): observed at the file's session_meta. A chain
	// Codex refuses has no Segments.
	Problems []Evidence
	// Memo, when set, keeps the replayed prefixes of the run's lineages
	// (memo.go): a prefix replayed for one rollout is not replayed again
	// for another that continues it.
	Memo *PrefixMemo
}

// Segment is the inherited prefix of one rollout of a lineage.
type Segment struct {
	Path      string // the file, plain or .zst
	RolloutID string
	// End is the cutoff the next rollout's history_base names:
	// end_byte_offset (in the decompressed bytes) and end_ordinal_exclusive.
	End        int64
	EndOrdinal int64
	// Via is the rollout whose history_base names the cutoff ("" for the
	// file replayed itself).
	Via string
}

// Inherited reports whether a position is a record of another rollout or a
// sub-agent's inherited context.
func (p Pos) Inherited() bool { return p.Segment != 0 }

// replaySegments feeds the segments of a to the engine, each read with
// open. What is wrong with a cutoff (past the source's end, off a line
// boundary, at the wrong ordinal) becomes an observation at the file's
// session_meta, as Codex refuses the thread or drops the record it cuts.
func replaySegments(e *engine, a *Ancestry, open func(path string, prefix int64) (io.ReadCloser, error), maxLine int64) error {
	if len(a.Segments) == 0 {
		e.pendingLineage = append(e.pendingLineage, a.Problems...)
		e.st.Segments = a.Segments
		return nil
	}
	from := 0
	if a.Memo != nil {
		// The engine is fresh: it becomes the state after the longest
		// prefix replayed before.
		var snap *engine
		if from, snap = a.Memo.longest(e.opts, maxLine, a.Segments); snap != nil {
			e.restore(snap)
		}
	}
	for i := from; i < len(a.Segments); i++ {
		e.startSegment(i + 1)
		if err := replaySegment(e, a.Segments[i], open, maxLine); err != nil {
			return err
		}
	}
	if a.Memo != nil && from < len(a.Segments) && e.memoizable() {
		a.Memo.store(e.opts, maxLine, a.Segments, e)
	}
	// The chain's own problems come first, then what the segments showed
	// (the part a snapshot holds).
	e.pendingLineage = append(slices.Clip(a.Problems), e.pendingLineage...)
	e.st.Segments = a.Segments
	e.inheritedPrefix = true
	e.startFile()
	return nil
}

func replaySegment(e *engine, s Segment, open func(path string, prefix int64) (io.ReadCloser, error), maxLine int64) error {
	f, err := open(s.Path, s.End)
	if err != nil {
		return fmt.Errorf("reading %s, which the rollout continues: %w", s.Path, err)
	}
	defer f.Close()
	rd := rollout.NewReader(f, maxLine)
	defer rd.Release()
	var end int64 // where the last record fed ends
	var lastOrd *int64
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &ReadError{Path: s.Path, Line: rd.Line() + 1, Err: err}
		}
		if rec.End() > s.End {
			if rec.Offset < s.End {
				// Codex scans back from the cutoff: the record it cuts
				// does not parse and is skipped.
				e.pendingLineage = append(e.pendingLineage, LineageCutoffOffBoundaryEvidence{Source: s.Path, Offset: s.End,
					Line: rec.Line, Cut: s.End - rec.Offset, Want: s.EndOrdinal, Dropped: true, Via: s.Via})
			} else if o, ok := rec.Ordinal(); ok && rec.Valid() && o != s.EndOrdinal {
				e.pendingLineage = append(e.pendingLineage, LineageCutoffOffBoundaryEvidence{Source: s.Path, Offset: s.End,
					Line: rec.Line, Want: s.EndOrdinal, Next: &o, Via: s.Via})
			}
			return nil
		}
		if o, ok := rec.Ordinal(); ok && rec.Valid() {
			lastOrd = &o
		}
		end = rec.End()
		if rec.Valid() && rec.Type() == rollout.TypeSessionMeta {
			// Each segment contributes what follows its session_meta.
			e.segmentMeta(rec.MetaPayload())
			continue
		}
		e.Feed(rec)
	}
	if end < s.End {
		e.pendingLineage = append(e.pendingLineage, LineageCutoffPastEndEvidence{Source: s.Path, Offset: s.End, Size: end, Via: s.Via})
		return nil
	}
	if lastOrd != nil && *lastOrd+1 != s.EndOrdinal {
		next := *lastOrd + 1
		e.pendingLineage = append(e.pendingLineage, LineageCutoffOffBoundaryEvidence{Source: s.Path, Offset: s.End, Want: s.EndOrdinal, Next: &next, Via: s.Via})
	}
	return nil
}

// startSegment makes the engine feed the k-th segment: its records are
// replayed into the thread, never judged.
func (e *engine) startSegment(k int) {
	if k > 1 {
		e.startFile()
	}
	e.seg = k
	e.reread = nil // items of another file are hashed as they pass
}

// segmentMeta takes what the replay of a segment needs from its
// session_meta: the history mode, the writer's version and the context
// window the segment starts in (what a rollback to one of its turns
// restores; the file's own session_meta names the window it starts).
func (e *engine) segmentMeta(p gjson.Result) {
	e.metaSeen = true
	e.st.CLIVersion = unique.Make(p.Get("cli_version").String()).Value() // not the payload's text (sessionMeta)
	e.st.HistoryMode = rollout.HistoryMode(p)
	if w := p.Get("context_window.window_id").String(); w != "" {
		w = strings.Clone(w)
		e.st.Lineage.WindowID, e.st.Lineage.FirstWindowID = w, w
	}
}

// startFile ends a segment: what the engine follows per file (its lines,
// ordinals, counters, session_meta) starts over, the thread (history,
// turns, world state, calls, ids) goes on.
func (e *engine) startFile() {
	e.seg = 0
	e.records = 0
	e.st.Records, e.st.Unread, e.st.UnknownTypes = 0, 0, 0
	e.unreadBeforeMeta, e.metaSeen, e.forkAllowed, e.failClosed = false, false, false, false
	e.firstLine, e.firstOffset = 0, 0
	e.pendingNoOrd, e.lastOrd, e.lastReadOrd, e.tail = nil, nil, nil, nil
	e.reemitted, e.firstReemitted = 0, Pos{}
	e.ordInLegacy, e.firstOrdInLegacy = 0, Pos{}
	e.anchorWanted, e.lastTime = false, time.Time{}
	e.startOwnCounters()
	e.st.MetaLine, e.st.ThreadID, e.st.CLIVersion, e.st.HistoryMode = 0, "", "", ""
}

// startOwnCounters: the token counters the file's own records carry are
// judged from its first own record (a fork's may continue its parent's,
// a sub-agent's start over).
func (e *engine) startOwnCounters() {
	e.lastTotal, e.lastThread, e.threadCounter = nil, nil, false
	e.skipDecrease, e.skipThreadDecrease = false, false
}

// keep decides whether an observation reaches the observers: none at a
// record of another rollout; at a sub-agent's inherited record only the
// facts about the record itself; without the prefix a file continues,
// none that need it.
func (e *engine) keep(o Observation) bool {
	switch {
	case e.seg > 0 || o.Pos.Segment > 0:
		return false
	case o.Pos.Segment == InheritedRecord && threadJudged[o.Kind()]:
		return false
	case e.prefixUnknown && prefixJudged[o.Kind()]:
		return false
	}
	return true
}

// threadJudged are the kinds that judge the thread's own story (its turns,
// tool calls, compactions, token counters, handoffs), not the bytes of a
// record: at a sub-agent's inherited record they are the parent's.
var threadJudged = kindSet(toolOrphanCall, toolOrphanOutput, toolDuplicateCallID, turnUnclosed, turnIDMismatch, rollbackTooMany,
	worldStatePatchWithoutBaseline, worldStateOrder, compactionEmptyHistory, compactionLostPrompt, compactionWindowLineage,
	compactionWindowNumber, tokensTotalDecreased, tokensOverWindow, tokensReemitted, promptMissingFromHistory,
	handoffOversized, handoffLostDeferred, handoffStaleDeferred, handoffDuplicateDeferred, handoffDoubleDelivery,
	handoffBadItems, handoffAbandoned)

// prefixJudged are the kinds whose truth depends on the history before the
// file's first record: not made when a file's inherited prefix is unknown.
var prefixJudged = kindSet(toolOrphanOutput, rollbackTooMany, worldStatePatchWithoutBaseline, compactionEmptyHistory,
	compactionLostPrompt, compactionWindowLineage, compactionWindowNumber, tokensTotalDecreased, turnIDMismatch,
	handoffDuplicateDeferred, handoffDoubleDelivery)

func kindSet(ks ...Kind) map[Kind]bool {
	m := make(map[Kind]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}

// lineageAtMeta reports what is wrong with the lineage at the file's
// session_meta, once it is seen.
func (e *engine) lineageAtMeta(pos Pos, hasBase bool) {
	for _, ev := range e.pendingLineage {
		e.emit(pos, ev)
	}
	e.pendingLineage = nil
	e.prefixUnknown = hasBase && !e.inheritedPrefix
}
