// Package reconstruct is the replay engine: records -> observations. It
// replays a rollout the way the agent does on resume (turns, rollbacks,
// compactions, world-state snapshots and merge patches, item ids, tool-call
// pairing, context-window lineage, token usage, handoffs) and reports what it
// sees as observations: plain facts with a position, no rule ids and no
// severities. checks/ turns them into findings; simulate-budget reads the
// flow facts (turns, token counts, compactions, rollbacks).
//
// Memory follows the reconstructed state (ids, counters, the world-state
// value), never the file size: lines are seen once and not kept.
package reconstruct

// Pos locates an observation in the file.
type Pos struct {
	Line    int
	Offset  int64
	Ordinal *int64 // the line's ordinal, where it has one
}

// Kind names a fact the engine observed.
type Kind int

const (
	// Line shape (from the reader).
	LineInvalidJSON Kind = iota + 1
	LineTornTail
	LineConcatenated
	LineInvalidUTF8
	LineControlChar
	LineOversized
	LineCRLF
	LineBlank

	EnvelopeMissingField // Facts: field
	EnvelopeBadTimestamp // Facts: value
	EnvelopeUnknownType  // Facts: type

	MetaMissing            // at end of file
	MetaNotFirst           // Facts: first_line (line of the record that is line 1)
	MetaUnexpectedExtra    // a second session_meta in a file that is not a fork
	MetaFilenameMismatch   // Facts: file_id, payload_id
	MetaUnknownHistoryMode // Facts: value

	OrdinalMissing     // paginated line without ordinal (not the last line)
	OrdinalLastMissing // the last line has no ordinal
	OrdinalDuplicate   // Facts: ordinal
	OrdinalGap         // Facts: want, got
	OrdinalBackwards   // Facts: previous, got
	OrdinalInLegacy    // Facts: count (reported once, at the first)

	ItemMissingID      // Facts: item_type, item_index (-1: the line's payload), prefix
	ItemPrefixMismatch // Facts: id, item_type, want_prefix
	ItemDuplicateID    // Facts: id, first_line
	ItemBadUUIDv7      // Facts: id, reason

	ToolOrphanCall      // at end of thread; Facts: call_id, item_type
	ToolOrphanOutput    // Facts: call_id
	ToolDuplicateCallID // Facts: call_id, first_line

	TurnUnclosed   // Facts: turn_id, at_eof (bool)
	TurnIDMismatch // Facts: started, closed

	RollbackTooMany // Facts: requested, available

	WorldStatePatchWithoutBaseline // Facts: after_compaction (bool)
	WorldStateNotObject
	WorldStateEmptyPatch
	WorldStateNullInSnapshot // Facts: paths
	WorldStateOrder

	CompactionLegacy
	CompactionMetadataLength // Facts: history, metadata
	CompactionWindowNumber   // Facts: want, got
	CompactionWindowLineage  // Facts: field, want, got
	CompactionWindowID       // Facts: field, value, numeric (bool)

	AgentCommMissingID // Facts: prefix

	TokensTotalDecreased // Facts: previous, got
	TokensOverWindow     // Facts: fill, window
	TokensReemitted      // Facts: count (reported once, at the first)

	// Flow facts: normal events other consumers follow.
	FlowTurnStarted // Facts: turn_id, window
	FlowUserPrompt  // Facts: turn_id, tokens (JSON-encoded UTF-8 bytes of the prompt)
	FlowTokenCount  // Facts: fill, window, input, cached, output, total (cumulative)
	FlowCompaction  // Facts: window_number
	FlowRollback    // Facts: num_turns, from_line (first dropped line)

	// Context handoffs (handoffs.md), judged at the end of the file on the
	// latest record of each id; every kind carries Facts id.
	HandoffOversized         // rule 1; Facts: tokens, budget, window, fill, prompt, reserve, cap, turn_id, at_eof
	HandoffLostDeferred      // rule 2; Facts: tokens, delivery_turn_id, turn_status, deferred_line
	HandoffStaleDeferred     // rule 3; Facts: tokens, delivery
	HandoffDuplicateDeferred // rule 4; Facts: kept_id, kept_line, items, provider_thread_id
	HandoffDoubleDelivery    // rule 5, at the second delivery; Facts: first_line, first_delivery, delivery, deliveries
	HandoffBadItems          // rule 6; Facts: overlap, unknown ([]string, capped), overlap_count, unknown_count
	HandoffAbandoned         // rule 7; Facts: tokens, turn_id, turn_line, provider_thread_id

	// Streaming frame logs (frames.md), replayed by reconstruct/frames.
	FrameDeltaMismatch   // Facts: content_index, kind, against, reason
	FrameUnterminated    // at the block's first frame; Facts: content_index, kind, deltas, delta_bytes, reason
	FrameSupersededBytes // once per log; Facts: bytes, frames, streams, log_bytes, ratio, rejected_streams, rejected_bytes
	FrameUnknownType     // once per type, at its first frame; Facts: type, count

	WorldStateDuplicateKey // Facts: keys (JSON pointers with the key), count

	FlowFramesReclaim // a frame-log stream reclamation rewrites; Facts: drop ([]frames.Range), frames, bytes, last_line

	PromptMissingFromHistory // a user_message event without its user message item; Facts: prompt (first bytes)
	CompactionEmptyHistory   // replacement_history is [] although the thread had history; Facts: items_before
	CompactionLostPrompt     // replacement_history drops the last user message; Facts: prompt, items
	FlowTimeAnchor           // a line whose timestamp does not parse (Facts: before, the last valid time in Unix ms, 0 if none), or the first valid line after such lines (Facts: after)
	RecordOverMigrationLimit // a legacy-mode record the paginated migration drops; Facts: bytes, limit, type ("" unread), checkpoint

	// FlowWorldState follows every world_state line. Facts: state (the
	// *mergepatch.Value baseline after the line, nil when there is none;
	// values are immutable and shared, never copied), full (bool).
	FlowWorldState
)

// Observation is one fact at one position.
type Observation struct {
	Kind  Kind
	Pos   Pos
	Facts map[string]any
}

// Observer receives observations in file order, except end-of-file facts
// (orphans, unclosed turns at the end, id-usage dependent facts), which
// arrive from Finish.
type Observer func(Observation)
