package reconstruct

import (
	"hash/maphash"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

func (e *engine) compacted(rec *rollout.Record, pos Pos, p gjson.Result) {
	e.emptyCompaction = nil // superseded by this one
	e.sinceWS = true
	e.lineage(pos, p)
	rh := p.Get("replacement_history")
	// A legacy compaction (no replacement_history) counts for
	// rollback/compacted-turn only where Codex's forward replay of before
	// 0.107 rebuilds it, as observed (see rollbackCompacted).
	legacy := !rh.IsArray()
	if !legacy || e.forwardReplay() {
		if !legacy {
			e.rhCompactions++
		}
		// A compaction after a rollback starts the history afresh: the
		// rollback's compacted turn no longer matters (see
		// rollbackCompacted).
		e.compactedRollbacks = e.compactedRollbacks[:0]
		// Codex's reverse replay counts a compaction in the segment of
		// the turn it is in, or after (before the next task_started).
		if t := e.turn; t != nil || e.lastTurn() != nil {
			if t == nil {
				t = e.lastTurn()
			}
			if t.compactedAt == 0 {
				t.compactedAt, t.compactedLegacy = pos.Line, legacy
			}
		}
	}
	if !rh.IsArray() {
		e.emit(pos, CompactionLegacyEvidence{})
		kept := e.legacyCompaction(pos)
		e.hof.noteDropped(e.st.History, 0)
		e.st.History = kept
		e.reindex() // the indexes pointed into the history just replaced
	} else {
		n := count(rh)
		if md := p.Get("replacement_history_metadata"); md.Exists() {
			if m := count(md); m != n {
				e.emit(pos, CompactionMetadataLengthEvidence{History: n, Metadata: m})
			}
		}
		before, prompt := e.st.History.Len(), e.lastPrompt
		kept, lastKept := false, ""
		e.hof.noteDropped(e.st.History, 0)
		e.st.History = newHistory(e.types)
		e.ids.reset()
		e.calls.reset()
		e.outputs.reset()
		clear(e.pending)
		raw := []byte(rh.Raw)
		i := 0
		rollout.Elements(raw, func(start, end int) bool {
			item := raw[start:end]
			f := readItem(item, nil)
			if isUserMessage(f.typ, f.role) && !contextualContent(f.content) {
				lastKept = promptKey(contentText(f.content))
				kept = kept || (prompt != "" && matchPrompt(prompt, lastKept))
			}
			prefix, typed := rollout.ItemPrefix(f.typ)
			if typed {
				e.checkRejectedID(pos, f, i)
			}
			if f.id != "" {
				e.checkPrefixedID(pos, f.id, f.typ, prefix, typed, i)
			}
			it := Item{ID: f.id, Type: f.typ, CallID: f.callID, Line: pos.Line, Offset: pos.Offset, Index: i, Segment: pos.Segment}
			it.prompt = isUserMessage(f.typ, f.role) && !contextualContent(f.content)
			if f.id != "" || f.callID != "" {
				it.hash = maphash.Bytes(hashSeed, item)
			}
			e.appendItem(pos, it, item)
			i++
			return true
		})
		e.judgeCompactedHistory(pos, p, before, n, prompt, kept)
		e.lastPrompt = lastKept
	}
	if md := p.Get("resume_metadata"); md.IsObject() {
		e.resumeMetadata(pos, md)
		e.checkpointMetadata(pos, md)
	}
	e.st.WorldState = nil
	e.afterCompact = true
	e.emit(pos, FlowCompactionEvidence{WindowNumber: e.st.Lineage.WindowNumber})
}

// legacyCompaction is the history Codex rebuilds on resume from a
// compacted record without replacement_history (written by Codex before
// 0.125): the session's initial context (what came before the first user
// prompt), then every user prompt of the history, then the record's message
// as one more user message. Assistant messages, tool calls, reasoning and
// the context messages of later turns are dropped. Codex 0.40 sent one
// bridge message instead of the prompts and the summary (before 0.55). Measured with the
// conformance harness (internal/testkit/conformance/testdata/*/compact-local); Codex rebuilds
// the initial context from the resuming process's settings, which the
// engine takes to be those the file recorded.
func (e *engine) legacyCompaction(pos Pos) *History {
	kept := newHistory(e.types)
	prefix := true
	bridge := bridgeEra(e.st.ResumeVersion())
	var folded []Item
	for it := range e.st.History.All() {
		if it.prompt {
			prefix = false
			if bridge {
				folded = append(folded, it)
				continue
			}
		}
		if prefix || it.prompt {
			kept.append(it)
		}
	}
	idx := SummaryIndex
	if bridge {
		idx = BridgeIndex
		if e.st.Bridges == nil {
			e.st.Bridges = map[int][]Item{}
		}
		e.st.Bridges[pos.Line] = folded
	}
	kept.append(Item{Type: "message", Line: pos.Line, Offset: pos.Offset, Index: idx, Segment: pos.Segment})
	return kept
}

// bridgeEra: the writer's version resumed a legacy compaction as one
// bridge message. Measured with the harness: 0.40.0, 0.47.0, 0.50.0 and
// 0.53.0 do, 0.55.0 (the next npm release) and later do not.
func bridgeEra(cliVersion string) bool {
	no, ok := Has(QuirkNoLegacyBridge, cliVersion)
	return ok && !no
}

// judgeCompactedHistory looks at what a compaction's replacement_history
// leaves the model. On resume Codex takes replacement_history as the whole
// new history (ContextManager::replace via replace_compacted_history,
// codex-rs/core/src/session; its local compaction, build_compacted_history
// in codex-rs/core/src/compact.rs, keeps the user messages and adds the
// summary as one more), so an empty one resumes with nothing, not even the
// summary, and one without the last user message resumes without the
// request the thread was working on. Newer compactions may carry context
// apart from the history (retained_context, checkpoint): a prompt found
// there is not lost. An empty one matters only while it is the newest:
// resume starts from the newest compaction, so one that a later compaction
// supersedes is never read (reclaim's superseded-checkpoints policy empties
// those on purpose); it is judged when the next compaction or the end of
// the file comes.
func (e *engine) judgeCompactedHistory(pos Pos, p gjson.Result, before, n int, prompt string, kept bool) {
	if n == 0 {
		if before > 0 {
			e.emptyCompaction = &Observation{Pos: pos, Evidence: CompactionEmptyHistoryEvidence{ItemsBefore: before}}
		}
		return
	}
	if prompt == "" || kept {
		return
	}
	for _, field := range []string{"retained_context", "checkpoint"} {
		if carries([]byte(p.Get(field).Raw), prompt) {
			return
		}
	}
	e.emit(pos, CompactionLostPromptEvidence{Prompt: prompt, Items: n})
}

func count(arr gjson.Result) int {
	n := 0
	arr.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	return n
}

// lineage checks and advances the context-window chain.
func (e *engine) lineage(pos Pos, p gjson.Result) {
	l := &e.st.Lineage
	numeric := false
	for _, field := range []string{"first_window_id", "previous_window_id", "window_id"} {
		v := p.Get(field)
		switch {
		case !v.Exists() || v.Type == gjson.Null:
		case v.Type == gjson.Number:
			numeric = true
			e.emit(pos, CompactionWindowIDEvidence{Field: field, Value: v.Raw, Numeric: true})
		default:
			if _, err := rollout.ParseUUIDv7(v.String()); err != nil {
				e.emit(pos, CompactionWindowIDEvidence{Field: field, Value: v.String()})
			}
		}
	}
	if wn := p.Get("window_number"); wn.Exists() {
		if want := l.WindowNumber + 1; wn.Int() != want {
			e.emit(pos, CompactionWindowNumberEvidence{Want: want, Got: wn.Int()})
		}
		l.WindowNumber = wn.Int()
	} else {
		l.WindowNumber++
	}
	if numeric {
		return // the legacy numeric form carries no chain to check
	}
	first := p.Get("first_window_id").String()
	if l.FirstWindowID == "" {
		l.FirstWindowID = first
		if l.WindowID == "" {
			l.WindowID = first
		}
	} else if first != "" && first != l.FirstWindowID {
		e.emit(pos, CompactionWindowLineageEvidence{Field: "first_window_id", Want: l.FirstWindowID, Got: first})
	}
	if prev := p.Get("previous_window_id").String(); prev != "" && l.WindowID != "" && prev != l.WindowID {
		e.emit(pos, CompactionWindowLineageEvidence{Field: "previous_window_id", Want: l.WindowID, Got: prev})
	}
	if w := p.Get("window_id").String(); w != "" {
		l.WindowID = w
	}
}
