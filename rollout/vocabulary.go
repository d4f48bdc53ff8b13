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
	{Name: TypeDynamicToolsUpdated, ReadBy: "reconstruct (the thread's dynamic tool set; shape unverified: no Codex run wrote one)"},
	{Name: TypeIDAllocation, ReadBy: "reconstruct, internal/edit/repair (kept as it is; repair derives no ids beside it; unverified)"},
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

// EventVocabulary are the event_msg payload types Codex persists
// (codex-rs/rollout/src/policy.rs). The history comes from response items:
// most events are the UI's copies and need no reading.
var EventVocabulary = []Term{
	{Name: "task_started", ReadBy: "reconstruct"},
	{Name: "turn_started", ReadBy: "reconstruct"},
	{Name: "task_complete", ReadBy: "reconstruct"},
	{Name: "turn_complete", ReadBy: "reconstruct"},
	{Name: "turn_aborted", ReadBy: "reconstruct"},
	{Name: "item_completed", ReadBy: "reconstruct"},
	{Name: "thread_rolled_back", ReadBy: "reconstruct"},
	{Name: "token_count", ReadBy: "reconstruct"},
	{Name: "user_message", ReadBy: "reconstruct"},
	{Name: "agent_message", Why: uiCopy},
	{Name: "agent_reasoning", Why: uiCopy},
	{Name: "agent_reasoning_raw_content", Why: uiCopy},
	{Name: "injected_message", Why: uiCopy},
	{Name: "context_compacted", Why: "announces a compaction; the compacted record is what resume reads"},
	{Name: "thread_name_updated", Why: "the thread's title: listing state"},
	{Name: "thread_settings_applied", Why: "settings on resume and at compaction; turn_context and resume_metadata carry what resume restores"},
	{Name: "thread_goal_updated", Why: "the /goal feature's state: not history"},
	{Name: "entered_review_mode", Why: "the review runs in its own thread; what it adds here is response items"},
	{Name: "exited_review_mode", Why: "the review runs in its own thread; what it adds here is response items"},
	{Name: "undo_completed", Why: "restores a git snapshot; no model-visible change (docs/codex-replay.md)"},
	{Name: "error", Why: "an error shown to the user: not history"},
	{Name: "guardian_assessment", Why: "the guardian reviewer's verdict: not history"},
	{Name: "sub_agent_activity", Why: "a sub-agent's progress: its thread is a rollout of its own"},
	{Name: "image_generation_end", Why: uiCopy},
	{Name: "web_search_end", Why: uiCopy},
	{Name: "exec_command_end", Why: uiCopy},
	{Name: "patch_apply_end", Why: uiCopy},
	{Name: "mcp_tool_call_end", Why: uiCopy},
	{Name: "view_image_tool_call", Why: uiCopy},
	{Name: "collab_agent_spawn_end", Why: uiCopy},
	{Name: "collab_agent_interaction_end", Why: uiCopy},
	{Name: "collab_waiting_end", Why: uiCopy},
	{Name: "collab_close_end", Why: uiCopy},
	{Name: "collab_resume_end", Why: uiCopy},
}

// uiCopy: the event repeats, for the UI, what a response item holds.
const uiCopy = "the UI's copy of what a response item holds: the history comes from the items"

// FieldVocabulary are the field paths of the records: KIND.PATH, where
// KIND is the record type, or for response_item and event_msg the record
// type and the payload's type (response_item:message), and PATH the
// members below payload joined by "." ("[]" for an array's elements). A
// name ending in ".*" covers everything below it.
var FieldVocabulary = []Term{
	// The envelope (RolloutLine).
	{Name: "envelope.timestamp", ReadBy: "rollout, reconstruct"},
	{Name: "envelope.type", ReadBy: "rollout"},
	{Name: "envelope.ordinal", ReadBy: "rollout, reconstruct"},
	{Name: "envelope.metadata.*", Why: "per-line history metadata (0.155 on: history sequence, provenance): Codex does not send it; the replay orders by lines and ordinals, and the goldens agree exactly without it"},

	// session_meta (SessionMetaLine).
	{Name: "session_meta.id", ReadBy: "rollout, reconstruct"},
	{Name: "session_meta.timestamp", ReadBy: "reconstruct"},
	{Name: "session_meta.cli_version", ReadBy: "rollout, reconstruct"},
	{Name: "session_meta.history_mode", ReadBy: "rollout"},
	{Name: "session_meta.history_base.*", ReadBy: "rollout"},
	{Name: "session_meta.forked_from_id", ReadBy: "rollout, reconstruct"},
	{Name: "session_meta.forked_from_ordinal_exclusive", Why: "history_base carries the cutoff the engine replays to"},
	{Name: "session_meta.parent_thread_id", ReadBy: "rollout, reconstruct"},
	{Name: "session_meta.subagent_history_start_ordinal", ReadBy: "rollout"},
	{Name: "session_meta.source.*", ReadBy: "rollout, reconstruct"},
	{Name: "session_meta.context_window.*", ReadBy: "reconstruct"},
	{Name: "session_meta.multi_agent_version", ReadBy: "reconstruct"},
	{Name: "session_meta.base_instructions.*", Why: sessionSetting},
	{Name: "session_meta.instructions", Why: sessionSetting},
	{Name: "session_meta.cwd", Why: sessionSetting},
	{Name: "session_meta.originator", Why: sessionSetting},
	{Name: "session_meta.model_provider", ReadBy: "internal/derive/resumeinput (what Codex sends only to the openai provider)"},
	{Name: "session_meta.dynamic_tools.*", ReadBy: "reconstruct (the thread's dynamic tool set)"},
	{Name: "session_meta.attached_thread", ReadBy: "internal/derive/space (an attached thread: forked_from_id is its parent)"},
	{Name: "session_meta.thread_source", Why: sessionSetting},
	{Name: "session_meta.session_id", Why: "the process's session, not the thread (id)"},
	{Name: "session_meta.account_scoped", Why: sessionSetting},
	{Name: "session_meta.runtime_workspace_roots", Why: sessionSetting},
	{Name: "session_meta.memory_mode", Why: sessionSetting},
	{Name: "session_meta.git.*", Why: sessionSetting},

	// response_item: the engine keys an item by type, id, call_id and role
	// (and a user prompt's content); Codex sends the rest verbatim.
	{Name: "response_item:message.type", ReadBy: "reconstruct"},
	{Name: "response_item:message.id", ReadBy: "reconstruct"},
	{Name: "response_item:message.role", ReadBy: "reconstruct"},
	{Name: "response_item:message.content", ReadBy: "reconstruct"},
	{Name: "response_item:message.content[].type", ReadBy: "reconstruct"},
	{Name: "response_item:message.content[].text", ReadBy: "reconstruct"},
	{Name: "response_item:message.content[].annotations", Why: sentVerbatim},
	{Name: "response_item:message.content[].image_url", Why: sentVerbatim},
	{Name: "response_item:message.status", Why: sentVerbatim},
	{Name: "response_item:message.phase", Why: sentVerbatim},
	{Name: "response_item:reasoning.type", ReadBy: "reconstruct"},
	{Name: "response_item:reasoning.id", ReadBy: "reconstruct"},
	{Name: "response_item:reasoning.summary.*", Why: sentVerbatim},
	{Name: "response_item:reasoning.content", Why: sentVerbatim},
	{Name: "response_item:reasoning.encrypted_content", Why: sentVerbatim},
	{Name: "response_item:function_call.type", ReadBy: "reconstruct"},
	{Name: "response_item:function_call.id", ReadBy: "reconstruct"},
	{Name: "response_item:function_call.call_id", ReadBy: "reconstruct"},
	{Name: "response_item:function_call.name", ReadBy: "checks"},
	{Name: "response_item:function_call.arguments", Why: sentVerbatim},
	{Name: "response_item:function_call.status", Why: sentVerbatim},
	{Name: "response_item:function_call.namespace", Why: sentVerbatim},
	{Name: "response_item:function_call_output.type", ReadBy: "reconstruct"},
	{Name: "response_item:function_call_output.id", ReadBy: "reconstruct"},
	{Name: "response_item:function_call_output.call_id", ReadBy: "reconstruct"},
	{Name: "response_item:function_call_output.output", Why: sentVerbatim},
	{Name: "response_item:function_call_output.output.*", Why: sentVerbatim},
	{Name: "response_item:function_call_output.status", Why: sentVerbatim},
	{Name: "response_item:compaction.type", ReadBy: "reconstruct"},
	{Name: "response_item:compaction.id", ReadBy: "reconstruct"},
	{Name: "response_item:compaction.encrypted_content", Why: sentVerbatim},

	{Name: "response_item:message.internal_chat_message_metadata_passthrough.*", Why: sentVerbatim},
	{Name: "response_item:reasoning.internal_chat_message_metadata_passthrough.*", Why: sentVerbatim},
	{Name: "response_item:function_call.internal_chat_message_metadata_passthrough.*", Why: sentVerbatim},
	{Name: "response_item:function_call_output.internal_chat_message_metadata_passthrough.*", Why: sentVerbatim},
	{Name: "response_item:compaction.internal_chat_message_metadata_passthrough.*", Why: sentVerbatim},

	// compacted (CompactedItem).
	{Name: "compacted.message", ReadBy: "reconstruct"},
	{Name: "compacted.guardian_history.*", Why: "the guardian reviewer's own history: never part of the thread's (docs/codex-replay.md)"},
	{Name: "compacted.compaction_response_id", Why: "the id of the remote compaction's response: not history"},
	{Name: "compacted.latest_token_usage_record.*", Why: "the usage at the compaction, as token_usage_record carries it: the engine takes usage from token_count"},
	{Name: "compacted.replacement_history", ReadBy: "reconstruct"},
	{Name: "compacted.replacement_history[].*", ReadBy: "reconstruct"},
	{Name: "compacted.replacement_history_metadata", ReadBy: "reconstruct (its length: compaction/metadata-length)"},
	{Name: "compacted.replacement_history_metadata[].*", Why: "per-item harness metadata parallel to replacement_history (sequence numbers, provenance, attribution): Codex does not send it, and the resume input the goldens compare exactly does not depend on it"},
	{Name: "compacted.window_id", ReadBy: "reconstruct"},
	{Name: "compacted.first_window_id", ReadBy: "reconstruct"},
	{Name: "compacted.previous_window_id", ReadBy: "reconstruct"},
	{Name: "compacted.window_number", ReadBy: "reconstruct"},
	{Name: "compacted.retained_context.*", ReadBy: "reconstruct"},
	{Name: "compacted.resume_metadata", ReadBy: "reconstruct"},
	{Name: "compacted.resume_metadata.previous_turn_settings.*", ReadBy: "reconstruct"},
	{Name: "compacted.resume_metadata.multi_agent_version", ReadBy: "reconstruct"},
	{Name: "compacted.resume_metadata.last_started_turn_id", ReadBy: "reconstruct"},
	{Name: "compacted.resume_metadata.dynamic_tools.*", ReadBy: "reconstruct (the thread's dynamic tool set after the checkpoint; rollout state's dynamic_tools)"},
	{Name: "compacted.resume_metadata.next_item_ordinal", ReadBy: "reconstruct, checks (ordinal/next-item), internal/edit/repair (unverified: no Codex run wrote it)"},
	{Name: "compacted.resume_metadata.turn_attribution.*", Why: "which client and turn made the compaction: attribution, not history or settings; the resume input does not depend on it (goldens)"},

	// turn_context (TurnContextItem): the settings resume restores.
	{Name: "turn_context.turn_id", ReadBy: "reconstruct"},
	{Name: "turn_context.model", ReadBy: "reconstruct"},
	{Name: "turn_context.comp_hash", ReadBy: "reconstruct"},
	{Name: "turn_context.realtime_active", ReadBy: "reconstruct"},
	{Name: "turn_context.multi_agent_version", ReadBy: "reconstruct"},
	{Name: "turn_context.root_turn_id", Why: turnSetting},
	{Name: "turn_context.cwd", Why: turnSetting},
	{Name: "turn_context.approval_policy", Why: turnSetting},
	{Name: "turn_context.approvals_reviewer", Why: turnSetting},
	{Name: "turn_context.sandbox_policy.*", Why: turnSetting},
	{Name: "turn_context.permission_profile.*", Why: turnSetting},
	{Name: "turn_context.collaboration_mode.*", Why: turnSetting},
	{Name: "turn_context.disabled_plugin_ids", Why: turnSetting},
	{Name: "turn_context.summary", Why: turnSetting},
	{Name: "turn_context.effort", Why: turnSetting},
	{Name: "turn_context.personality", Why: turnSetting},
	{Name: "turn_context.user_instructions", Why: turnSetting},
	{Name: "turn_context.developer_instructions", Why: turnSetting},
	{Name: "turn_context.truncation_policy.*", Why: turnSetting},
	{Name: "turn_context.current_date", Why: turnSetting},
	{Name: "turn_context.workspace_roots", Why: turnSetting},
	{Name: "turn_context.timezone", Why: turnSetting},

	// world_state (WorldStateItem): a merge patch, read whole.
	{Name: "world_state.*", ReadBy: "reconstruct, mergepatch"},

	// token_usage_record: per-response usage next to token_count.
	{Name: "token_usage_record.*", ReadBy: "reconstruct"},

	// event_msg payloads.
	{Name: "event_msg:task_started.type", ReadBy: "reconstruct"},
	{Name: "event_msg:task_started.turn_id", ReadBy: "reconstruct"},
	{Name: "event_msg:task_started.model_context_window", ReadBy: "reconstruct"},
	{Name: "event_msg:task_started.started_at", Why: eventDetail},
	{Name: "event_msg:task_started.root_turn_id", Why: eventDetail},
	{Name: "event_msg:task_started.collaboration_mode_kind", Why: eventDetail},
	{Name: "event_msg:task_started.turn_attribution.*", Why: eventDetail},
	{Name: "event_msg:task_complete.type", ReadBy: "reconstruct"},
	{Name: "event_msg:task_complete.turn_id", ReadBy: "reconstruct"},
	{Name: "event_msg:task_complete.last_agent_message", Why: eventDetail},
	{Name: "event_msg:task_complete.root_turn_id", Why: eventDetail},
	{Name: "event_msg:task_complete.started_at", Why: eventDetail},
	{Name: "event_msg:task_complete.completed_at", Why: eventDetail},
	{Name: "event_msg:task_complete.duration_ms", Why: eventDetail},
	{Name: "event_msg:task_complete.time_to_first_token_ms", Why: eventDetail},
	{Name: "event_msg:item_completed.type", ReadBy: "reconstruct"},
	{Name: "event_msg:item_completed.item.*", ReadBy: "reconstruct"},
	{Name: "event_msg:item_completed.thread_id", Why: eventDetail},
	{Name: "event_msg:item_completed.turn_id", Why: eventDetail},
	{Name: "event_msg:item_completed.started_at_ms", Why: eventDetail},
	{Name: "event_msg:item_completed.completed_at_ms", Why: eventDetail},
	{Name: "event_msg:token_count.type", ReadBy: "reconstruct"},
	{Name: "event_msg:token_count.info.*", ReadBy: "reconstruct"},
	{Name: "event_msg:token_count.rate_limits.*", Why: "the account's rate limits: not thread state"},
	{Name: "event_msg:thread_settings_applied.*", Why: "settings on resume and at compaction; turn_context and resume_metadata carry what resume restores"},
	{Name: "event_msg:user_message.*", ReadBy: "reconstruct"},
	{Name: "event_msg:agent_message.*", Why: uiCopy},
	{Name: "event_msg:agent_reasoning.*", Why: uiCopy},
	{Name: "event_msg:context_compacted.*", Why: "announces a compaction; the compacted record is what resume reads"},
	{Name: "event_msg:turn_aborted.type", ReadBy: "reconstruct"},
	{Name: "event_msg:turn_aborted.turn_id", ReadBy: "reconstruct"},
	{Name: "event_msg:turn_aborted.reason", Why: eventDetail},
	{Name: "event_msg:thread_rolled_back.type", ReadBy: "reconstruct"},
	{Name: "event_msg:thread_rolled_back.num_turns", ReadBy: "reconstruct"},
}

// Why fields are knowingly ignored, by kind.
const (
	sessionSetting = "the session's settings: resume takes them from its own configuration, not from the file"
	turnSetting    = "a turn's setting that resume does not restore from the file (it restores model, comp_hash, realtime_active, multi_agent_version, turn_id)"
	sentVerbatim   = "part of the item Codex sends verbatim; the engine keys items by type, id, call_id and role"
	eventDetail    = "the event's timing and attribution: not history"
)
