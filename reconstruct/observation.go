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
