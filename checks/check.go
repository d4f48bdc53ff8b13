package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// mapping says which rule an observation kind violates and how to say it.
type mapping struct {
	rule string
	msg  func(f map[string]any) string
}

var byKind = map[reconstruct.Kind]mapping{
	reconstruct.LineInvalidJSON: {"line/invalid-json", func(map[string]any) string { return "line is not one JSON object; Codex skips it on resume" }},
	reconstruct.LineTornTail: {"line/torn-tail", func(f map[string]any) string {
		return fmt.Sprintf("last line is torn: %v bytes without newline that do not parse", f["bytes"])
	}},
	reconstruct.LineConcatenated: {"line/concatenated", func(f map[string]any) string {
		return fmt.Sprintf("%v JSON objects on one line (two writers?)", f["objects"])
	}},
	reconstruct.LineInvalidUTF8: {"line/invalid-utf8", func(map[string]any) string { return "line holds bytes that are not UTF-8" }},
	reconstruct.LineControlChar: {"line/control-char", func(map[string]any) string { return "line holds a NUL or raw control character" }},
	reconstruct.LineOversized: {"line/oversized", func(f map[string]any) string {
		return fmt.Sprintf("line of %v bytes is over --max-line-bytes: kept, not analysed", f["bytes"])
	}},
	reconstruct.LineCRLF:  {"line/crlf", func(map[string]any) string { return "line ends with CRLF" }},
	reconstruct.LineBlank: {"line/blank", func(map[string]any) string { return "blank line" }},
	reconstruct.EnvelopeMissingField: {"envelope/missing-field", func(f map[string]any) string {
		if v, ok := f["value"]; ok {
			return fmt.Sprintf("envelope field %q is %v, not a string: Codex cannot deserialize the line and drops it on resume", f["field"], v)
		}
		return fmt.Sprintf("envelope line is missing %q: Codex cannot deserialize it and drops it on resume", f["field"])
	}},
	reconstruct.EnvelopeBadTimestamp: {"envelope/bad-timestamp", func(f map[string]any) string { return fmt.Sprintf("timestamp %v is not RFC 3339 UTC", f["value"]) }},
	reconstruct.EnvelopeUnknownType:  {"envelope/unknown-type", func(f map[string]any) string { return fmt.Sprintf("unknown line type %q (kept verbatim)", f["type"]) }},
	reconstruct.MetaMissing:          {"meta/missing", func(map[string]any) string { return "no session_meta line: the thread cannot be identified or resumed" }},
	reconstruct.MetaNotFirst: {"meta/not-first", func(f map[string]any) string {
		return fmt.Sprintf("session_meta is not the first line (line %v is)", f["first_line"])
	}},
	reconstruct.MetaUnexpectedExtra: {"meta/unexpected-extra", func(f map[string]any) string {
		return fmt.Sprintf("second session_meta (id %v) in a file that is not a fork or sub-agent", f["id"])
	}},
	reconstruct.MetaFilenameMismatch: {"meta/filename-mismatch", func(f map[string]any) string {
		return fmt.Sprintf("file name says thread %v, session_meta says %v", f["file_id"], f["payload_id"])
	}},
	reconstruct.MetaUnknownHistoryMode: {"meta/unknown-history-mode", func(f map[string]any) string {
		skipped, _ := f["skipped"].([]string)
		return fmt.Sprintf("history_mode %v is neither legacy nor paginated: the history was not replayed, only line and envelope checks ran (skipped: %v)", f["value"], strings.Join(skipped, ", "))
	}},
	reconstruct.OrdinalMissing:     {"ordinal/missing", func(map[string]any) string { return "line has no ordinal in a paginated file" }},
	reconstruct.OrdinalLastMissing: {"ordinal/last-missing", func(map[string]any) string { return "last line has no ordinal: resume fails" }},
	reconstruct.OrdinalDuplicate:   {"ordinal/duplicate", func(f map[string]any) string { return fmt.Sprintf("ordinal %v used twice", f["ordinal"]) }},
	reconstruct.OrdinalGap: {"ordinal/gap", func(f map[string]any) string {
		return fmt.Sprintf("ordinal %v where %v was expected", f["got"], f["want"])
	}},
	reconstruct.OrdinalBackwards: {"ordinal/non-monotonic", func(f map[string]any) string {
		return fmt.Sprintf("ordinal %v after %v goes backwards", f["got"], f["previous"])
	}},
	reconstruct.OrdinalInLegacy: {"ordinal/in-legacy", func(map[string]any) string { return "ordinals in a legacy-mode file (first occurrence)" }},
	reconstruct.ItemMissingID: {"item/missing-id", func(f map[string]any) string {
		return fmt.Sprintf("%v item has no id; expected %v_<uuidv7>", f["item_type"], f["prefix"])
	}},
	reconstruct.ItemPrefixMismatch: {"item/id-prefix-mismatch", func(f map[string]any) string {
		return fmt.Sprintf("%v id %v should start with %v_: the API rejects it on resume", f["item_type"], f["id"], f["want_prefix"])
	}},
	reconstruct.ItemDuplicateID: {"item/duplicate-id", func(f map[string]any) string {
		return fmt.Sprintf("id %v is already used by a different item on line %v", f["id"], f["first_line"])
	}},
	reconstruct.ItemBadUUIDv7:    {"item/bad-uuidv7", func(f map[string]any) string { return fmt.Sprintf("id %v: %v", f["id"], f["reason"]) }},
	reconstruct.ToolOrphanCall:   {"tool/orphan-call", orphanCallMsg},
	reconstruct.ToolOrphanOutput: {"tool/orphan-output", orphanOutputMsg},
	reconstruct.ToolDuplicateCallID: {"tool/duplicate-call-id", func(f map[string]any) string {
		return fmt.Sprintf("call_id %v already used by the call on line %v", f["call_id"], f["first_line"])
	}},
	reconstruct.TurnUnclosed: {"turn/unclosed", func(f map[string]any) string {
		if f["at_eof"] == true {
			return fmt.Sprintf("turn %v has not ended by the end of the file (in progress?)", f["turn_id"])
		}
		return fmt.Sprintf("turn %v never ended before the next turn started", f["turn_id"])
	}},
	reconstruct.PromptMissingFromHistory: {"turn/prompt-not-in-history", func(f map[string]any) string {
		return fmt.Sprintf("user_message %q has no user message in the model history: on resume the model sees this turn's answers but not the question", f["prompt"])
	}},
	reconstruct.TurnIDMismatch: {"turn/id-mismatch", func(f map[string]any) string {
		return fmt.Sprintf("turn %v is closed by an event for turn %v", f["started"], f["closed"])
	}},
	reconstruct.RollbackTooMany: {"rollback/too-many-turns", func(f map[string]any) string {
		if f["available"] == 0 {
			return fmt.Sprintf("rollback of %v user turns, but there is no user turn: Codex changes nothing", f["requested"])
		}
		return fmt.Sprintf("rollback of %v user turns, but only %v exist: Codex drops all %v and keeps what came before the first", f["requested"], f["available"], f["available"])
	}},
	reconstruct.WorldStatePatchWithoutBaseline: {"worldstate/patch-without-baseline", func(f map[string]any) string {
		if f["after_compaction"] == true {
			return "world-state patch after a compaction, before a new full snapshot"
		}
		return "world-state patch before any full snapshot"
	}},
	reconstruct.WorldStateNotObject:  {"worldstate/not-object", func(map[string]any) string { return "world_state.state is not a JSON object" }},
	reconstruct.WorldStateEmptyPatch: {"worldstate/empty-patch", func(map[string]any) string { return "world-state patch changes nothing" }},
	reconstruct.WorldStateNullInSnapshot: {"worldstate/null-in-snapshot", func(f map[string]any) string {
		return fmt.Sprintf("null object fields in a full snapshot: %v", f["paths"])
	}},
	reconstruct.WorldStateDuplicateKey: {"worldstate/duplicate-key", func(f map[string]any) string {
		return fmt.Sprintf("world state repeats keys %v (%v in all): readers disagree on which value wins", f["keys"], f["count"])
	}},
	reconstruct.WorldStateOrder: {"worldstate/order", func(map[string]any) string {
		return "world-state patch with no model-visible history since the previous world_state line"
	}},
	reconstruct.CompactionLegacy: {"compaction/legacy", func(map[string]any) string {
		return "compaction without replacement_history: newest Codex cannot resume from it"
	}},
	reconstruct.CompactionEmptyHistory: {"compaction/empty-history", func(f map[string]any) string {
		return fmt.Sprintf("replacement_history is empty (the history had %v items): the thread resumes with nothing, not even the summary", f["items_before"])
	}},
	reconstruct.CompactionLostPrompt: {"compaction/lost-prompt", func(f map[string]any) string {
		return fmt.Sprintf("replacement_history (%v items) drops the last user message %q: the thread resumes without the request it was working on", f["items"], f["prompt"])
	}},
	reconstruct.RecordOverMigrationLimit: {"line/over-migration-limit", func(f map[string]any) string {
		switch {
		case f["checkpoint"] == true:
			return fmt.Sprintf("compacted checkpoint of %v bytes is over Codex's %v-byte migration limit: migrating this legacy file to paginated history drops it, and resume then replays the history it replaced (context overflow)", f["bytes"], f["limit"])
		case f["type"] == "":
			return fmt.Sprintf("line of %v bytes (not read: its type is unknown, it may be a compacted checkpoint) is over Codex's %v-byte migration limit: migrating this legacy file to paginated history drops it", f["bytes"], f["limit"])
		}
		return fmt.Sprintf("%v record of %v bytes is over Codex's %v-byte migration limit: migrating this legacy file to paginated history drops it", f["type"], f["bytes"], f["limit"])
	}},
	reconstruct.CompactionMetadataLength: {"compaction/metadata-length", func(f map[string]any) string {
		return fmt.Sprintf("replacement_history has %v items but replacement_history_metadata has %v", f["history"], f["metadata"])
	}},
	reconstruct.CompactionWindowNumber: {"compaction/window-number", func(f map[string]any) string {
		return fmt.Sprintf("window_number %v where %v was expected", f["got"], f["want"])
	}},
	reconstruct.CompactionWindowLineage: {"compaction/window-lineage", func(f map[string]any) string {
		return fmt.Sprintf("%v is %v, expected %v", f["field"], f["got"], f["want"])
	}},
	reconstruct.CompactionWindowID: {"compaction/window-id", func(f map[string]any) string {
		if f["numeric"] == true {
			return fmt.Sprintf("%v is the numeric legacy form %v", f["field"], f["value"])
		}
		return fmt.Sprintf("%v %v is not a UUIDv7", f["field"], f["value"])
	}},
	reconstruct.AgentCommMissingID: {"agentcomm/missing-id", func(map[string]any) string { return "inter_agent_communication has no id; expected amsg_<uuidv7>" }},
	reconstruct.TokensTotalDecreased: {"tokens/total-decreased", func(f map[string]any) string {
		return fmt.Sprintf("cumulative total_tokens fell from %v to %v", f["previous"], f["got"])
	}},
	reconstruct.TokensOverWindow: {"tokens/over-window", func(f map[string]any) string {
		return fmt.Sprintf("context fill %v exceeds the window of %v", f["fill"], f["window"])
	}},
	reconstruct.TokensReemitted: {"tokens/reemitted", func(map[string]any) string { return "token_count snapshot re-emitted (counted once)" }},

	// Streaming frame logs (frames.md); messages in frames.go.
	reconstruct.FrameDeltaMismatch:   {"frames/delta-mismatch", frameMismatchMsg},
	reconstruct.FrameUnterminated:    {"frames/unterminated", frameUnterminatedMsg},
	reconstruct.FrameSupersededBytes: {"frames/superseded-bytes", frameSupersededMsg},
	reconstruct.FrameUnknownType:     {"frames/unknown-type", frameUnknownTypeMsg},
}

// severityOf applies the era- and context-dependent severities of the catalog.
func severityOf(r *Rule, o reconstruct.Observation, st *reconstruct.State) Severity {
	switch r.ID {
	case "item/missing-id":
		if st.HistoryMode == rollout.HistoryPaginated {
			return Error
		}
	case "turn/unclosed":
		if o.Facts["at_eof"] == true {
			return Info
		}
	case "tool/orphan-call":
		if o.Facts["in_open_turn"] == true && !sessionStopped(o.Facts) {
			return Info
		}
		if o.Facts["normalized"] == false {
			return Error
		}
	case "tool/orphan-output":
		if o.Facts["normalized"] == false {
			return Error
		}
	case "line/over-migration-limit":
		if o.Facts["checkpoint"] == true {
			return Error
		}
	case "compaction/window-id":
		if o.Facts["numeric"] == true {
			return Info
		}
	}
	return r.Severity
}
