package rollout

import "github.com/tidwall/gjson"

// Era is the generation of the format a file was written in (format.md §1).
type Era string

const (
	EraUnknown  Era = "unknown"
	EraBare     Era = "bare"     // mid 2025: no envelope, no timestamps, no ids
	EraEnvelope Era = "envelope" // {timestamp, type, payload} lines
	EraFrames   Era = "frames"   // a streaming frame log (frames.md), not a rollout
)

// History modes of envelope-era files.
const (
	HistoryLegacy    = "legacy"
	HistoryPaginated = "paginated"
)

// DetectEra looks at the first readable record of a file.
func DetectEra(rec *Record) Era {
	if rec == nil || !rec.Valid() {
		return EraUnknown
	}
	if isFrame(rec) {
		return EraFrames
	}
	if rec.HasType() && rec.PayloadBytes() != nil { // a valid line: its payload is a value
		return EraEnvelope
	}
	if !rec.HasType() && rec.Get("id").Exists() && !rec.Get("record_type").Exists() {
		return EraBare
	}
	if rec.HasType() {
		// A bare response item or an envelope line missing its payload:
		// the timestamp tells the envelope apart.
		if rec.Get("timestamp").Exists() {
			return EraEnvelope
		}
		return EraBare
	}
	return EraUnknown
}

// HistoryMode reads history_mode from a session_meta payload: "legacy" when
// absent, the raw value otherwise (callers fail closed on unknown values).
func HistoryMode(meta gjson.Result) string { return historyModeOf(meta.Get("history_mode")) }

// historyModeOf is HistoryMode of the history_mode member's value.
func historyModeOf(m gjson.Result) string {
	if !m.Exists() || m.Type == gjson.Null {
		return HistoryLegacy
	}
	if m.Type != gjson.String {
		return m.Raw
	}
	switch m.Str { // the constants, not a string of the payload's text to keep
	case HistoryLegacy:
		return HistoryLegacy
	case HistoryPaginated:
		return HistoryPaginated
	}
	return m.Str
}

// frameTypes are the frame types of streaming frame logs (frames.md): the
// assistant message events, the agent's wrappers, and the agent lifecycle
// and tool-execution events that real logs interleave with them.
var frameTypes = map[string]bool{
	"start": true, "done": true, "error": true,
	"text_start": true, "text_delta": true, "text_end": true,
	"thinking_start": true, "thinking_delta": true, "thinking_end": true,
	"toolcall_start": true, "toolcall_delta": true, "toolcall_end": true,
	"reasoning_summary_start": true, "reasoning_summary_delta": true, "reasoning_summary_end": true,
	"message_start": true, "message_update": true, "message_end": true,
	"turn_start": true, "turn_end": true, "agent_start": true, "agent_end": true,
	"tool_execution_start": true, "tool_execution_update": true, "tool_execution_end": true,
}

// KnownFrameType reports whether t is a frame type this version understands.
func KnownFrameType(t string) bool { return frameTypes[t] }

// isFrame recognises a line of a frame log: a known frame type, or an
// assistantMessageEvent wrapper, and no envelope payload.
func isFrame(rec *Record) bool {
	if !rec.Valid() || rec.PayloadBytes() != nil || !rec.HasType() {
		return false
	}
	return KnownFrameType(rec.Type()) || rec.Get("assistantMessageEvent").IsObject()
}
