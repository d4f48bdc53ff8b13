package checks

import (
	"fmt"
	"strconv"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Tool calls and their outputs.
var toolRules = []*Rule{
	on(Rule{ID: "tool/orphan-call", Severity: Warning, Since: "0.1.0",
		Title: "a tool call with no output by the end of the thread (error in bare-era files; info while the session may be running)",
		Doc: "After an interrupt or a crash a call can be left without output. The consequence depends on the Codex version that resumes the file (cli_version of session_meta). " +
			"Every numbered Rust release answers such a call with an \"aborted\" output before each request, so the thread resumes but the model believes the call was aborted although the tool may have run (warning): from rust-v0.2.0 to rust-v0.47.0 run_turn's missing_calls (codex-rs/core/src/codex.rs) sends the outputs before the history; from rust-v0.48.0 on ContextManager's normalize step (ensure_call_outputs_present, openai/codex#5473) inserts each after its call (codex-rs/core/src/context_manager/normalize.rs today). " +
			"In bare-era files (mid 2025, no cli_version) the writer is not known to do either, so the call is taken to be sent as is, which the API rejects on every later request with \"No tool output found for function call\" (error). " +
			"A call of the last turn, still open at the end of the file, is reported too: when the file was last written an hour or more before --now (default: the clock) the session died mid-call and the call is judged like any other; otherwise the tool may still be running (info) and repair leaves it alone.",
		Fix: "add an output marked aborted (not while the session may be running)", OptIn: true,
		plan: withEvidence(abortedOutput),
		context: severityBy(func(e reconstruct.ToolOrphanCallEvidence, _ *reconstruct.State) Severity {
			switch {
			case e.InOpenTurn && !sessionStopped(e.SessionStopped):
				return Info // the tool may still be running
			case e.Normalized != nil && !*e.Normalized:
				return Error
			}
			return Warning
		}),
	}, orphanCallMessage),
	on(Rule{ID: "tool/orphan-output", Severity: Warning, Since: "0.1.0",
		Title: "a tool output whose call_id has no call (error before Codex 0.48)",
		Doc: "Usually the call was lost in a torn or rolled-back line. From Codex 0.48 on, remove_orphan_outputs (added by openai/codex#5473, merged 2025-10-21, first released in rust-v0.48.0; codex-rs/core/src/context_manager/normalize.rs today) drops the output before every request and logs an error (debug builds panic): the thread resumes without it (warning). " +
			"Before that, and in bare-era files, the output is sent and the API rejects every later request with \"No tool call found for function call output\" (error). " +
			"Codex pairs calls and outputs by call_id over the whole history, wherever they are: an output written before its call (a bad merge swapping lines) is reported with the call's line (call_line); every release from 0.40 to 0.171 sends the output, then the call, and neither drops the output nor answers the call with \"aborted\" (warning: the order is not the one Codex writes).",
		Fix: "move the output line after its call's line when the call comes later; otherwise to FILE.quarantine.jsonl", OptIn: true,
		plan: withEvidence(dropOutput),
		context: severityBy(func(e reconstruct.ToolOrphanOutputEvidence, _ *reconstruct.State) Severity {
			if e.CallLine > 0 {
				return Warning
			}
			if e.Normalized != nil && !*e.Normalized {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.ToolOrphanOutputEvidence) string {
		if e.CallLine > 0 {
			return fmt.Sprintf("%v for call_id %v comes before its call (line %d): Codex pairs them by call_id and sends the output, then the call, as they are (nothing dropped, nothing aborted)", e.ItemType, e.CallID, e.CallLine)
		}
		what := fmt.Sprintf("%v for call_id %v has no call", e.ItemType, e.CallID)
		if e.Normalized != nil && !*e.Normalized {
			return what + ": this Codex version sends it and the API rejects every request (\"No tool call found\")"
		}
		return what + ": Codex drops it before every request (and logs an error)"
	}),
	on(Rule{ID: "tool/duplicate-call-id", Severity: Warning, Since: "0.1.0",
		Title: "two tool calls with one call_id",
		Doc:   "Outputs pair with calls by call_id; with two calls the pairing is ambiguous and one call looks answered when it is not.",
	}, func(e reconstruct.ToolDuplicateCallIDEvidence) string {
		return fmt.Sprintf("call_id %v already used by the call on line %d", e.CallID, e.FirstLine)
	}),
}

// abortedOutput answers an orphan call with the output Codex itself gives
// an interrupted call ("aborted"), on a new line right after the call's
// line, marked with the rule that added it.
func abortedOutput(p *planner, f Finding, e reconstruct.ToolOrphanCallEvidence) string {
	if e.InOpenTurn && !sessionStopped(e.SessionStopped) {
		return "the session may still be running (last written less than an hour before --now): the call may yet get its output"
	}
	callID, index := e.CallID, e.ItemIndex
	outType := rollout.OutputTypeFor(e.ItemType)
	if callID == "" || outType == "" {
		return "the call has no call_id or no known output type"
	}
	usesIDs := p.envelope && (p.st.UsesItemIDs || p.st.HistoryMode == rollout.HistoryPaginated)
	ids := p.ids
	envelope := p.envelope
	p.add(f.Line, "aborted:"+callID, rollout.Edit{Kind: rollout.EditInsertAfter, Label: f.Rule,
		Value: func(c *rollout.EditContext) ([]byte, error) {
			item := []byte(`{"type":`)
			item = strconv.AppendQuote(item, outType)
			if usesIDs {
				prefix, _ := rollout.ItemPrefix(outType)
				item = append(item, `,"id":"`...)
				item = append(item, ids.id(prefix, ids.millis(c), c.Line, synthIndex(index))...)
				item = append(item, '"')
			}
			item = append(item, `,"call_id":`...)
			item = rollout.AppendJSONString(item, callID)
			item = append(item, `,"output":"aborted"`...)
			if !envelope {
				return append(item, `,"`+MarkerKey+`":"tool/orphan-call"}`...), nil
			}
			item = append(item, '}')
			line := []byte{'{'}
			if ts := member(c.Object, "timestamp"); ts != nil {
				line = append(append(append(line, `"timestamp":`...), ts...), ',')
			}
			line = append(line, `"type":"response_item","payload":`...)
			line = append(line, item...)
			return append(line, `,"`+MarkerKey+`":"tool/orphan-call"}`...), nil
		}})
	return ""
}

// synthIndex is the item index an id of a line repair creates is derived
// from: 2^40 + the index of the call it answers, apart from any real item.
func synthIndex(index int) int { return 1<<40 + index }

// dropOutput moves an output whose call is missing to quarantine, and one
// whose call comes later after that call (its bytes unchanged but for an
// ordinal repair renumbers; the original line is kept in quarantine).
func dropOutput(p *planner, f Finding, e reconstruct.ToolOrphanOutputEvidence) string {
	if e.ItemIndex >= 0 {
		return "the output is inside a compaction's replacement history"
	}
	callID := e.CallID
	envelope := p.envelope
	var moved []byte // the output's object, taken when its line is dropped
	p.add(f.Line, "drop:"+callID, rollout.Edit{Kind: rollout.EditDrop, Label: f.Rule, Match: func(obj []byte) bool {
		item := obj
		if envelope {
			item = member(obj, "payload")
		}
		ok := rollout.IsToolOutput(rollout.DecodeString(member(item, "type"))) &&
			rollout.DecodeString(member(item, "call_id")) == callID
		if ok && e.CallLine > 0 {
			moved = append(moved[:0], obj...)
		}
		return ok
	}})
	if e.CallLine > f.Line {
		// Its call comes later: the output goes right after it, as Codex
		// writes them (the file is read in order, so the drop above has
		// taken the object when the call's line is written).
		p.add(e.CallLine, "move:"+callID, rollout.Edit{Kind: rollout.EditInsertAfter, Label: f.Rule,
			Value: func(*rollout.EditContext) ([]byte, error) {
				if moved == nil {
					return nil, fmt.Errorf("the output for call_id %s was not read before its call", callID)
				}
				return append([]byte(nil), moved...), nil
			}})
	}
	return ""
}

// sessionStopped reports whether the file was last written long enough
// before --now for the session to be over (nil: unknown).
func sessionStopped(stopped *bool) bool { return stopped != nil && *stopped }

func orphanCallMessage(e reconstruct.ToolOrphanCallEvidence) string {
	what := fmt.Sprintf("%v %v has no output", e.ItemType, e.CallID)
	if e.InOpenTurn {
		switch {
		case e.SessionStopped == nil:
			what += " in the last turn, which has not ended (in progress, or the session died: no time to tell)"
		case !*e.SessionStopped:
			return what + fmt.Sprintf(" in the last turn; the file was last written at %s, less than an hour before --now: the tool may still be running", e.LastWritten)
		default:
			what += fmt.Sprintf(" and the session stopped (the file was last written at %s)", e.LastWritten)
		}
	}
	if e.Normalized != nil && !*e.Normalized {
		return what + ": this Codex version sends it as is and the API rejects every request (\"No tool output found\")"
	}
	return what + ": Codex sends it with an \"aborted\" output on resume, so the model believes the call was aborted"
}
