// Package reconstruct is the replay engine: records -> observations. It
// replays a rollout the way the agent does on resume (turns, rollbacks,
// compactions, world-state snapshots and merge patches, item ids, tool-call
// pairing, context-window lineage, token usage, handoffs) and reports what it
// sees as observations: typed evidence with a position, no rule ids and no
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
	// Segment says whose record the position is: 0 the file's own;
	// InheritedRecord a record of the file that is a sub-agent's
	// inherited context (before session_meta.subagent_history_start_ordinal);
	// k > 0 a record of another rollout, the k-th of State.Segments, whose
	// prefix the file continues (session_meta.history_base). Observations
	// at another rollout's records are never reported; see lineage.go.
	Segment int
}

// InheritedRecord is Pos.Segment of a sub-agent's inherited records.
const InheritedRecord = -1

// Kind names a fact the engine observed. Each kind has one evidence type
// (evidence.go) that says what was seen.
type Kind int

const (
	// Line shape (from the reader).
	lineInvalidJSON Kind = iota + 1
	lineTornTail
	lineConcatenated
	lineInvalidUTF8
	lineLoneSurrogate
	lineDuplicateKey
	lineControlChar
	lineOversized
	lineCRLF
	lineBlank

	envelopeMissingField
	envelopeBadTimestamp
	envelopeUnknownType

	metaMissing // at end of file
	metaNotFirst
	metaUnexpectedExtra // a second session_meta in a file that is not a fork
	metaFilenameMismatch
	metaUnknownHistoryMode

	ordinalMissing     // paginated line without ordinal (not the last line)
	ordinalLastMissing // the last line has no ordinal
	ordinalDuplicate
	ordinalGap
	ordinalBackwards
	ordinalInLegacy

	itemMissingID
	itemPrefixMismatch
	itemDuplicateID
	itemBadUUIDv7

	toolOrphanCall // at end of thread
	toolOrphanOutput
	toolDuplicateCallID

	turnUnclosed
	turnIDMismatch

	rollbackTooMany

	worldStatePatchWithoutBaseline
	worldStateNotObject
	worldStateEmptyPatch
	worldStateNullInSnapshot
	worldStateOrder

	compactionLegacy
	compactionMetadataLength
	compactionWindowNumber
	compactionWindowLineage
	compactionWindowID

	agentCommMissingID

	tokensTotalDecreased
	tokensOverWindow
	tokensReemitted

	// Flow facts: normal events other consumers follow.
	flowTurnStarted
	flowUserPrompt
	flowTokenCount
	flowCompaction
	flowRollback

	// Context handoffs (handoffs.md), judged at the end of the file on the
	// latest record of each id.
	handoffOversized         // rule 1
	handoffLostDeferred      // rule 2
	handoffStaleDeferred     // rule 3
	handoffDuplicateDeferred // rule 4
	handoffDoubleDelivery    // rule 5, at the second delivery
	handoffBadItems          // rule 6
	handoffAbandoned         // rule 7

	// Streaming frame logs (frames.md), replayed by package frames.
	frameDeltaMismatch
	frameUnterminated    // at the block's first frame
	frameSupersededBytes // once per log
	frameUnknownType     // once per type, at its first frame

	worldStateDuplicateKey

	flowFramesReclaim // a frame-log stream reclamation rewrites

	promptMissingFromHistory // a user_message event without its user message item
	compactionEmptyHistory   // replacement_history is [] although the thread had history
	compactionLostPrompt     // replacement_history drops the last user message
	flowTimeAnchor           // a line whose timestamp does not parse, or the first valid line after such lines
	recordOverMigrationLimit // a legacy-mode record the paginated migration drops

	flowWorldState // follows every world_state line

	// A Codex home (home/): its databases, locks and migration leftovers
	// against its rollouts, observed by the home package, not by a replay.
	homeRowFileMissing
	homeRowOutsideHome
	homeRowOtherThread
	homeRolloutWithoutRow
	homeHistoryModeMismatch
	homeArchivedMismatch
	homeProjectionPastEOF
	homeProjectionOffBoundary
	homeProjectionOrdinal
	homeProjectedItemMismatch
	homeWriterLockHeld
	homeWriterLockStale
	homeMigrationPending
	homeMigrationStaged

	itemDuplicate         // an item appended twice, byte for byte
	lineGlued             // a torn record with complete records after it on one line
	itemRejectedID        // an item id of a shape the Responses API rejects
	ordinalUnknownTail    // the last records of a paginated file are of types its Codex version cannot read
	rollbackCompactedTurn // a rollback drops a turn that compacted

	// Lineages (lineage.go): the rollouts a paginated fork or revert
	// continues, at the file's session_meta.
	lineageMissingSource
	lineageCycle
	lineageOtherThread
	lineageNotPaginated
	lineageCutoffIncludesMeta
	lineageCutoffPastEnd
	lineageCutoffOffBoundary
	lineageMalformedBase

	kindEnd // keep last
)

// Kinds lists every kind.
func Kinds() []Kind {
	out := make([]Kind, 0, kindEnd-1)
	for k := Kind(1); k < kindEnd; k++ {
		out = append(out, k)
	}
	return out
}

// FlowKinds are the observations of normal events (no rule consumes them):
// what simulate-budget's evidence, repair's fix facts and view follow.
var FlowKinds = []Kind{flowTurnStarted, flowUserPrompt, flowTokenCount, flowCompaction, flowRollback,
	flowFramesReclaim, flowWorldState, flowTimeAnchor}

// Observation is one fact at one position.
type Observation struct {
	Pos      Pos
	Evidence Evidence // what was observed: its type says the Kind
}

// Kind is the kind of the observation.
func (o Observation) Kind() Kind { return o.Evidence.Kind() }

// Observer receives observations in file order, except end-of-file facts
// (orphans, unclosed turns at the end, id-usage dependent facts), which
// arrive from Finish.
type Observer func(Observation)
