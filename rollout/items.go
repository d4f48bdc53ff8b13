package rollout

import "strings"

// Line types of the envelope era (format.md §2).
const (
	TypeSessionMeta       = "session_meta"
	TypeResponseItem      = "response_item"
	TypeCompacted         = "compacted"
	TypeTurnContext       = "turn_context"
	TypeEventMsg          = "event_msg"
	TypeWorldState        = "world_state"
	TypeInterAgent        = "inter_agent_communication"
	TypeInterAgentMeta    = "inter_agent_communication_metadata"
	TypeTokenUsageRecord  = "token_usage_record"
	TypeContextHandoff    = "context_handoff"
	TypeSecurityRiskScore = "security_risk_score"
	TypeRetainedContext   = "retained_context"
	TypeRealtimeItem      = "realtime_item"
	// Written by Codex 0.171 (absent from 0.154's binary): the thread's
	// dynamic tool set after a change (DynamicToolsUpdatedPayload
	// {thread_id, tools}, the shape of a compacted record's
	// resume_metadata.dynamic_tools), and the state of Codex's item id
	// allocator (ResponseItemIdAllocation; payload shape not seen yet).
	// docs/codex-replay.md, "Records of Codex 0.171".
	TypeDynamicToolsUpdated = "dynamic_tools_updated"
	TypeIDAllocation        = "id_allocation"
)

var knownLineTypes = map[string]bool{
	TypeSessionMeta: true, TypeResponseItem: true, TypeCompacted: true,
	TypeTurnContext: true, TypeEventMsg: true, TypeWorldState: true,
	TypeInterAgent: true, TypeInterAgentMeta: true, TypeTokenUsageRecord: true,
	TypeContextHandoff: true, TypeSecurityRiskScore: true,
	TypeRetainedContext: true, TypeRealtimeItem: true,
	TypeDynamicToolsUpdated: true, TypeIDAllocation: true,
}

// lineTypeNames holds each known line type's name, so that a type read
// from a line is the shared constant, not a copy.
var lineTypeNames = func() map[string]string {
	m := make(map[string]string, len(knownLineTypes))
	for t := range knownLineTypes {
		m[t] = t
	}
	return m
}()

// KnownLineType reports whether t is a line type this version understands.
func KnownLineType(t string) bool { return knownLineTypes[t] }

// itemPrefixes maps response item types to the prefix of their locally
// assigned ids (Codex's ResponseItem::id_prefix).
var itemPrefixes = map[string]string{
	"message":                 "msg",
	"agent_message":           "amsg",
	"reasoning":               "rs",
	"local_shell_call":        "lsh",
	"function_call":           "fc",
	"function_call_output":    "fco",
	"custom_tool_call":        "ctc",
	"custom_tool_call_output": "ctco",
	"tool_search_call":        "tsc",
	"tool_search_output":      "tso",
	"web_search_call":         "ws",
	"image_generation_call":   "ig",
	"compaction":              "cmp",
	"context_compaction":      "cmp",
	"additional_tools":        "at",
}

// ItemTypes returns the response item types that get an id.
func ItemTypes() []string {
	out := make([]string, 0, len(itemPrefixes))
	for t := range itemPrefixes {
		out = append(out, t)
	}
	return out
}

// ItemPrefix returns the id prefix of a response item type; ok is false for
// types that get no id (ghost_snapshot, unknown types).
func ItemPrefix(itemType string) (prefix string, ok bool) {
	prefix, ok = itemPrefixes[itemType]
	return prefix, ok
}

// InterAgentPrefix is the id prefix of inter_agent_communication lines.
const InterAgentPrefix = "amsg"

// HandoffPrefix is the id prefix of context_handoff records.
const HandoffPrefix = "hof"

// SplitID splits a prefixed id ("msg_0199...") into its prefix and the rest.
// An id has a prefix when it contains '_' with a non-empty part on each side.
func SplitID(id string) (prefix, rest string, ok bool) {
	i := strings.IndexByte(id, '_')
	if i <= 0 || i == len(id)-1 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// Tool calls and the output types that answer them (paired by call_id).
var toolOutputs = map[string]string{
	"function_call":    "function_call_output",
	"custom_tool_call": "custom_tool_call_output",
	"local_shell_call": "function_call_output",
	"tool_search_call": "tool_search_output",
}

// IsToolCall reports whether an item type is a call that expects an output.
func IsToolCall(itemType string) bool { _, ok := toolOutputs[itemType]; return ok }

// IsToolOutput reports whether an item type answers a tool call.
func IsToolOutput(itemType string) bool {
	return itemType == "function_call_output" || itemType == "custom_tool_call_output" || itemType == "tool_search_output"
}

// OutputTypeFor is the output item type that answers a call type.
func OutputTypeFor(callType string) string { return toolOutputs[callType] }
