package rollout

import "strings"

// The vocabulary: every name of the rollout format that rollout knows,
// each either read (by which package) or knowingly ignored (and why). It
// is what the drift check (internal/testkit/drift, `make drift
// VERSION=...`) holds a new Codex release to: a record type, item type,
// event type or field the release writes and the vocabulary does not list
// fails it. Tests hold the lists to the code (every line type of
// knownLineTypes, every item type of itemPrefixes is here).

// Term is one name of the vocabulary.
type Term struct {
	// Name is a record type, an item or event type, or a field path
	// (see Fields).
	Name string
	// ReadBy is the package that reads it; "" when rollout ignores it.
	ReadBy string
	// Why says why an ignored name needs no reading.
	Why string
}

// RecordVocabulary are the line types (RolloutItem variants).
var RecordVocabulary = []Term{
	{Name: TypeSessionMeta, ReadBy: "rollout, reconstruct"},
	{Name: TypeResponseItem, ReadBy: "reconstruct"},
	{Name: TypeCompacted, ReadBy: "reconstruct"},
	{Name: TypeTurnContext, ReadBy: "reconstruct"},
	{Name: TypeEventMsg, ReadBy: "reconstruct"},
	{Name: TypeWorldState, ReadBy: "reconstruct, mergepatch"},
	{Name: TypeInterAgent, ReadBy: "reconstruct"},
	{Name: TypeInterAgentMeta, Why: "routing metadata of an inter-agent message: not history, not sent"},
	{Name: TypeTokenUsageRecord, ReadBy: "reconstruct"},
	{Name: TypeContextHandoff, ReadBy: "reconstruct"},
	{Name: TypeSecurityRiskScore, Why: "a safety classifier's score: not history, not sent"},
	{Name: TypeRetainedContext, Why: "not history: Codex rebuilds the context it retains from the history"},
	{Name: TypeRealtimeItem, Why: "a realtime (voice) conversation's item: not part of the model history"},
}

// ItemVocabulary are the response_item payload types (ResponseItem variants)
// Codex deserializes. Codex leaves an item of any other type out of the
// request (ResponseItem's catch-all variant; measured from 0.40.0 to
// 0.171.0 by internal/testkit/conformance's unknown-item-type corruption),
// and so does the engine.
var ItemVocabulary = []Term{
	{Name: "message", ReadBy: "reconstruct"},
	{Name: "reasoning", ReadBy: "reconstruct"},
	{Name: "local_shell_call", ReadBy: "reconstruct"},
	{Name: "function_call", ReadBy: "reconstruct"},
	{Name: "function_call_output", ReadBy: "reconstruct"},
	{Name: "custom_tool_call", ReadBy: "reconstruct"},
	{Name: "custom_tool_call_output", ReadBy: "reconstruct"},
	{Name: "tool_search_call", ReadBy: "reconstruct"},
	{Name: "tool_search_output", ReadBy: "reconstruct"},
	{Name: "web_search_call", ReadBy: "reconstruct"},
	{Name: "image_generation_call", ReadBy: "reconstruct"},
	{Name: "ghost_snapshot", ReadBy: "reconstruct"},
	{Name: "compaction", ReadBy: "reconstruct"},
	{Name: "compaction_summary", ReadBy: "reconstruct"},
	{Name: "context_compaction", ReadBy: "reconstruct"},
	{Name: "agent_message", ReadBy: "reconstruct"},
	{Name: "additional_tools", ReadBy: "reconstruct"},
	{Name: "configuration_update", ReadBy: "reconstruct"},
	{Name: "compaction_trigger", ReadBy: "reconstruct"},
}

var knownItemTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range ItemVocabulary {
		m[t.Name] = true
	}
	return m
}()

// KnownItemType reports whether Codex knows response_item type t: an item
// of an unknown type is read by no Codex and sent by none.
func KnownItemType(t string) bool { return knownItemTypes[t] }

// Known reports whether name is listed in terms, or lies below a listed
// name ending in ".*" (a field path whose members are all covered).
func Known(terms []Term, name string) (Term, bool) {
	for _, t := range terms {
		if t.Name == name {
			return t, true
		}
		if p, ok := strings.CutSuffix(t.Name, ".*"); ok && (name == p || strings.HasPrefix(name, p+".") || strings.HasPrefix(name, p+"[]")) {
			return t, true
		}
	}
	return Term{}, false
}

// EventVocabulary are the event_msg payload types.
var EventVocabulary = []Term{}

// FieldVocabulary are the field paths of the records: KIND.PATH, where
// KIND is the record type, or for response_item and event_msg the record
// type and the payload's type (response_item:message), and PATH the
// members below payload joined by "." ("[]" for an array's elements). A
// name ending in ".*" covers everything below it.
var FieldVocabulary = []Term{}
