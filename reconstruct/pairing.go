package reconstruct

// Codex pairs tool calls and outputs by call_id over the whole history,
// wherever each lies: ContextManager's normalize step (from rust-v0.48.0,
// codex-rs/core/src/context_manager/normalize.rs) answers a call only when
// no output anywhere has its call_id (ensure_call_outputs_present) and drops
// an output only when no call anywhere has it (remove_orphan_outputs);
// run_turn's missing_calls before it (codex-rs/core/src/codex.rs) collects
// the outputs' call_ids the same way. Neither moves an item: an output
// written before its call is sent there, and a call repeated with its
// output is answered (internal/testkit/conformance corrupt/output-before-call
// and corrupt/duplicate-turn, every release from 0.40.0 to 0.171.0).

// pairByCallID settles, once the whole history is known, which calls are
// answered and which outputs are orphans, and turns the outputs noted as
// orphans while replaying that have a later call into outputs written
// before their call (CallLine set).
func (e *engine) pairByCallID() {
	h := e.st.History
	for i := range h.Len() {
		x := h.item(i)
		switch {
		case h.isToolCall(x) && x.callLen > 0:
			_, ok := e.outputs.getItem(h, i)
			x.answered = ok
		case h.isToolOutput(x):
			_, ok := e.calls.getItem(h, i)
			if x.callLen > 0 && ok {
				h.setMark(i, 0)
			} else {
				h.setMark(i, markOrphan)
			}
		}
	}
	kept := e.orphanOutputs[:0]
	for _, o := range e.orphanOutputs {
		ev := o.Evidence.(ToolOrphanOutputEvidence)
		if j, ok := e.calls.get(h, ev.CallID); ok && ev.CallID != "" {
			if h.pos(j).Line <= o.Pos.Line {
				continue // answered by an earlier call after all (a rollback or compaction replayed)
			}
			ev.CallLine = h.pos(j).Line
			o.Evidence = ev
		}
		kept = append(kept, o)
	}
	e.orphanOutputs = kept
}
