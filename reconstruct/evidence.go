package reconstruct

import (
	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/reconstruct/frames"
)

// Evidence is what an observation says, one struct type per Kind. Its JSON
// tags are the public "evidence" object of the findings made from it
// (checks/testdata/evidence.txt pins them): a tag may be added, never
// renamed or removed.
type Evidence interface {
	Kind() Kind
}

// Line shape (from the reader).

// LineInvalidJSONEvidence is the evidence of line/invalid-json: a line that
// is not one JSON object.
type LineInvalidJSONEvidence struct {
	// Type is the line type the start of the line names, when it reads as
	// a record cut short ("compacted"); "" when it names none.
	Type string `json:"type,omitempty"`
	// FirstLine: the line is the file's first, where Codex reads the
	// session_meta.
	FirstLine bool `json:"first_line,omitempty"`
}

// LineTornTailEvidence is the evidence of line/torn-tail: the last line has
// no newline and does not parse (crash mid-write; error before Codex 0.145).
type LineTornTailEvidence struct {
	Bytes int64 `json:"bytes"`
	// CLIVersion is the writer's (session_meta), which decides what the
	// next resume does with the fragment (see checks, line/torn-tail).
	CLIVersion string `json:"cli_version,omitempty"`
}

// LineConcatenatedEvidence is the evidence of line/concatenated: several JSON
// objects on one physical line (two writers).
type LineConcatenatedEvidence struct {
	Objects int `json:"objects"`
}

// LineGluedEvidence: a torn record (TornBytes bytes) with complete
// records after it on the same line; Records names them (line type, and
// payload type: "response_item/function_call").
type LineGluedEvidence struct {
	TornBytes int64    `json:"torn_bytes"`
	Records   []string `json:"records"`
}

// LineBOMEvidence: the file begins with a UTF-8 byte order mark (EF BB
// BF), glued to the first record; Record names it ("session_meta").
type LineBOMEvidence struct {
	Record string `json:"record"`
}

// LineInvalidUTF8Evidence is the evidence of line/invalid-utf8: bytes that
// are not UTF-8 (Codex refuses the whole file).
type LineInvalidUTF8Evidence struct{}

// LineLoneSurrogateEvidence is the evidence of line/lone-surrogate: a string
// escapes half of a UTF-16 surrogate pair (\ud800 alone).
type LineLoneSurrogateEvidence struct{}

// LineDuplicateKeyEvidence: an object of the line repeats a key (outside a
// world_state record, which worldstate/duplicate-key covers).
type LineDuplicateKeyEvidence struct {
	Keys  []string `json:"keys"`  // the repeated keys (at most 5)
	Count int      `json:"count"` // all repeats in the line
}

// LineControlCharEvidence is the evidence of line/control-char: NUL or raw
// control characters inside a record.
type LineControlCharEvidence struct{}

// LineOversizedEvidence is the evidence of line/oversized: a line over
// --max-line-bytes: not parsed, kept.
type LineOversizedEvidence struct {
	Bytes int64 `json:"bytes"`
}

// LineCRLFEvidence is the evidence of line/crlf: a CRLF line ending.
type LineCRLFEvidence struct{}

// LineBlankEvidence is the evidence of line/blank: a blank line.
type LineBlankEvidence struct{}

// RecordOverMigrationLimitEvidence: a record of a legacy-mode file over
// the record limit of Codex's paginated migration; Type is "" for a line
// too long to read, Checkpoint true for a compacted record.
type RecordOverMigrationLimitEvidence struct {
	Bytes      int64  `json:"bytes"`
	Limit      int64  `json:"limit"`
	Type       string `json:"type"`
	Checkpoint bool   `json:"checkpoint,omitempty"`
}

var recordOverMigrationLimit = newKind()

func (RecordOverMigrationLimitEvidence) Kind() Kind { return recordOverMigrationLimit }

var (
	lineInvalidJSON   = newKind()
	lineTornTail      = newKind()
	lineConcatenated  = newKind()
	lineGlued         = newKind()
	lineBOM           = newKind()
	lineInvalidUTF8   = newKind()
	lineLoneSurrogate = newKind()
	lineDuplicateKey  = newKind()
	lineControlChar   = newKind()
	lineOversized     = newKind()
	lineCRLF          = newKind()
	lineBlank         = newKind()
)

func (LineInvalidJSONEvidence) Kind() Kind   { return lineInvalidJSON }
func (LineTornTailEvidence) Kind() Kind      { return lineTornTail }
func (LineConcatenatedEvidence) Kind() Kind  { return lineConcatenated }
func (LineGluedEvidence) Kind() Kind         { return lineGlued }
func (LineBOMEvidence) Kind() Kind           { return lineBOM }
func (LineInvalidUTF8Evidence) Kind() Kind   { return lineInvalidUTF8 }
func (LineLoneSurrogateEvidence) Kind() Kind { return lineLoneSurrogate }
func (LineDuplicateKeyEvidence) Kind() Kind  { return lineDuplicateKey }
func (LineControlCharEvidence) Kind() Kind   { return lineControlChar }
func (LineOversizedEvidence) Kind() Kind     { return lineOversized }
func (LineCRLFEvidence) Kind() Kind          { return lineCRLF }
func (LineBlankEvidence) Kind() Kind         { return lineBlank }

// Envelope.

// EnvelopeMissingFieldEvidence is the evidence of envelope/missing-field: an
// envelope line without timestamp, type or payload.
type EnvelopeMissingFieldEvidence struct {
	Field string `json:"field"`           // "type", "payload" or "timestamp"
	Value string `json:"value,omitempty"` // a timestamp that is not a string
}

// EnvelopeBadTimestampEvidence is the evidence of envelope/bad-timestamp: a
// timestamp string that is not RFC 3339 in UTC.
type EnvelopeBadTimestampEvidence struct {
	Value string `json:"value"`
}

// EnvelopeUnknownTypeEvidence is the evidence of envelope/unknown-type: a
// line type this version does not know (kept verbatim, counted).
type EnvelopeUnknownTypeEvidence struct {
	Type string `json:"type"`
}

var (
	envelopeMissingField = newKind()
	envelopeBadTimestamp = newKind()
	envelopeUnknownType  = newKind()
)

func (EnvelopeMissingFieldEvidence) Kind() Kind { return envelopeMissingField }
func (EnvelopeBadTimestampEvidence) Kind() Kind { return envelopeBadTimestamp }
func (EnvelopeUnknownTypeEvidence) Kind() Kind  { return envelopeUnknownType }

// session_meta.

// MetaMissingEvidence is the evidence of meta/missing: no session_meta on
// line 1 and none anywhere.
type MetaMissingEvidence struct {
	// Empty: the file has no line at all (the finding is about the whole
	// file, line 0).
	Empty bool `json:"empty,omitempty"`
}

// MetaNotFirstEvidence is the evidence of meta/not-first: session_meta
// present but not on line 1.
type MetaNotFirstEvidence struct {
	FirstLine int `json:"first_line"` // the line that is first
}

// MetaUnexpectedExtraEvidence is the evidence of meta/unexpected-extra: a
// second session_meta in a file that is not a fork or sub-agent.
type MetaUnexpectedExtraEvidence struct {
	ID string `json:"id"`
}

// MetaFilenameMismatchEvidence is the evidence of meta/filename-mismatch: the
// filename's UUID differs from session_meta.payload.id.
type MetaFilenameMismatchEvidence struct {
	FileID    string `json:"file_id"`
	PayloadID string `json:"payload_id"`
	// The records after session_meta whose payload.thread_id names the
	// file name's thread, and session_meta's.
	RecordsWithFileID    int  `json:"records_with_file_id"`
	RecordsWithPayloadID int  `json:"records_with_payload_id"`
	Paginated            bool `json:"paginated"`
}

// MetaUnknownHistoryModeEvidence: the file is not replayed; Skipped lists
// the rule areas (and rules) that need the replay.
type MetaUnknownHistoryModeEvidence struct {
	Value   string   `json:"value"`
	Skipped []string `json:"skipped"`
}

// MetaUncheckedVersionEvidence is the evidence of meta/unchecked-version:
// the file's Codex is newer than the newest version the rules and the
// replay were checked against.
type MetaUncheckedVersionEvidence struct {
	CLIVersion     string `json:"cli_version"`
	CheckedOldest  string `json:"checked_oldest"`
	CheckedThrough string `json:"checked_through"`
}

var (
	metaUncheckedVersion   = newKind()
	metaMissing            = newKind()
	metaNotFirst           = newKind()
	metaUnexpectedExtra    = newKind()
	metaFilenameMismatch   = newKind()
	metaUnknownHistoryMode = newKind()
)

func (MetaUncheckedVersionEvidence) Kind() Kind   { return metaUncheckedVersion }
func (MetaMissingEvidence) Kind() Kind            { return metaMissing }
func (MetaNotFirstEvidence) Kind() Kind           { return metaNotFirst }
func (MetaUnexpectedExtraEvidence) Kind() Kind    { return metaUnexpectedExtra }
func (MetaFilenameMismatchEvidence) Kind() Kind   { return metaFilenameMismatch }
func (MetaUnknownHistoryModeEvidence) Kind() Kind { return metaUnknownHistoryMode }

// Ordinals.

// OrdinalMissingEvidence is the evidence of ordinal/missing: a line without
// ordinal in a paginated file.
type OrdinalMissingEvidence struct{}

// OrdinalLastMissingEvidence is the evidence of ordinal/last-missing: the
// last line has no ordinal: resume fails.
type OrdinalLastMissingEvidence struct{}

// OrdinalDuplicateEvidence is the evidence of ordinal/duplicate: an ordinal
// used twice.
type OrdinalDuplicateEvidence struct {
	Ordinal   int64 `json:"ordinal"`
	FirstLine int   `json:"first_line"` // the line that has it first
	// Copy: the line repeats that line's record (type and payload; the
	// timestamp may differ): one record written twice.
	Copy bool `json:"copy"`
}

// OrdinalGapEvidence is the evidence of ordinal/gap: ordinals skip values.
type OrdinalGapEvidence struct {
	Want int64 `json:"want"`
	Got  int64 `json:"got"`
}

// OrdinalBackwardsEvidence is the evidence of ordinal/non-monotonic: ordinals
// go backwards.
type OrdinalBackwardsEvidence struct {
	Previous int64 `json:"previous"`
	Got      int64 `json:"got"`
}

// OrdinalInLegacyEvidence is reported once, at the first ordinal, with the
// number of lines of the file that carry one.
type OrdinalInLegacyEvidence struct {
	Count int `json:"count"`
}

// OrdinalUnknownTailEvidence: the last records of a paginated file,
// from this one (of line type Type, at Ordinal) on, are of types the
// file's Codex version (CLIVersion) cannot read; ReadSince is the first
// version that reads Type ("": none). The next resume by such a version
// appends at NextOrdinal (the last readable record's ordinal + 1), an
// ordinal already taken.
type OrdinalUnknownTailEvidence struct {
	Type        string `json:"type"`
	Ordinal     *int64 `json:"ordinal"`
	NextOrdinal *int64 `json:"next_ordinal"`
	ReadSince   string `json:"read_since,omitempty"`
	CLIVersion  string `json:"cli_version,omitempty"`
}

var ordinalUnknownTail = newKind()

func (OrdinalUnknownTailEvidence) Kind() Kind { return ordinalUnknownTail }

var (
	ordinalMissing     = newKind()
	ordinalLastMissing = newKind()
	ordinalDuplicate   = newKind()
	ordinalGap         = newKind()
	ordinalBackwards   = newKind()
	ordinalInLegacy    = newKind()
)

func (OrdinalMissingEvidence) Kind() Kind     { return ordinalMissing }
func (OrdinalLastMissingEvidence) Kind() Kind { return ordinalLastMissing }
func (OrdinalDuplicateEvidence) Kind() Kind   { return ordinalDuplicate }
func (OrdinalGapEvidence) Kind() Kind         { return ordinalGap }
func (OrdinalBackwardsEvidence) Kind() Kind   { return ordinalBackwards }
func (OrdinalInLegacyEvidence) Kind() Kind    { return ordinalInLegacy }

// Item ids. ItemIndex is the item's index in a compaction's
// replacement_history, or -1 for the line's own payload.

// ItemMissingIDEvidence is the evidence of item/missing-id: a response item
// without id in a file that uses ids (error in paginated files).
type ItemMissingIDEvidence struct {
	ItemType  string `json:"item_type"`
	ItemIndex int    `json:"item_index"`
	Prefix    string `json:"prefix"` // the prefix its id should have
}

// ItemPrefixMismatchEvidence is the evidence of item/id-prefix-mismatch: an
// id prefix that does not match the item type.
type ItemPrefixMismatchEvidence struct {
	ID         string `json:"id"`
	ItemType   string `json:"item_type"`
	WantPrefix string `json:"want_prefix"`
	ItemIndex  int    `json:"item_index"`
}

// ItemDuplicateIDEvidence is the evidence of item/duplicate-id: two different
// live items with one id.
type ItemDuplicateIDEvidence struct {
	ID        string `json:"id"`
	FirstLine int    `json:"first_line"`
	ItemIndex int    `json:"item_index"`
}

// ItemBadUUIDv7Evidence is the evidence of item/bad-uuidv7: a locally formed
// id whose UUID is not a valid version 7.
type ItemBadUUIDv7Evidence struct {
	ID        string `json:"id"`
	Reason    string `json:"reason"`
	ItemIndex int    `json:"item_index"`
}

// ItemDuplicateEvidence: the item repeats, byte for byte, the live item
// on FirstLine: the same id, or without an id the same call_id (CallID).
type ItemDuplicateEvidence struct {
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	ItemType  string `json:"item_type"`
	FirstLine int    `json:"first_line"`
	ItemIndex int    `json:"item_index"`
}

var itemDuplicate = newKind()

func (ItemDuplicateEvidence) Kind() Kind { return itemDuplicate }

// ItemRejectedIDEvidence: an id of a shape the Responses API rejects;
// Reasons are "empty", "unprefixed", "too-long" (over 64 characters) and
// "charset" (outside [A-Za-z0-9_-]). Stripped: Codex 0.145 and later leave
// it out of requests (empty or unprefixed). Sent: whether the file's Codex
// version (CLIVersion) sends it (nil: unknown).
type ItemRejectedIDEvidence struct {
	ID         string   `json:"id"`
	ItemType   string   `json:"item_type"`
	ItemIndex  int      `json:"item_index"`
	Reasons    []string `json:"reasons"`
	Stripped   bool     `json:"stripped"`
	Sent       *bool    `json:"sent"`
	CLIVersion string   `json:"cli_version,omitempty"`
}

var itemRejectedID = newKind()

func (ItemRejectedIDEvidence) Kind() Kind { return itemRejectedID }

var (
	itemMissingID      = newKind()
	itemPrefixMismatch = newKind()
	itemDuplicateID    = newKind()
	itemBadUUIDv7      = newKind()
)

func (ItemMissingIDEvidence) Kind() Kind      { return itemMissingID }
func (ItemPrefixMismatchEvidence) Kind() Kind { return itemPrefixMismatch }
func (ItemDuplicateIDEvidence) Kind() Kind    { return itemDuplicateID }
func (ItemBadUUIDv7Evidence) Kind() Kind      { return itemBadUUIDv7 }

// Tool calls.

// ToolOrphanCallEvidence is reported at the end of the thread. A call of
// the turn still open at the end of the file has InOpenTurn, LastWritten
// (the file's last valid timestamp) and SessionStopped: whether the file
// was last written StoppedAfter or more before Options.Now (nil: unknown).
// The verdict, not the age, is kept so that two runs over one file agree.
// Normalized says whether the file's Codex version inserts an output for
// it on resume (nil: the version is unknown).
type ToolOrphanCallEvidence struct {
	CallID         string `json:"call_id"`
	ItemType       string `json:"item_type"`
	ItemIndex      int    `json:"item_index"`
	InOpenTurn     bool   `json:"in_open_turn,omitempty"`
	LastWritten    string `json:"last_written,omitempty"`
	SessionStopped *bool  `json:"session_stopped,omitempty"`
	Normalized     *bool  `json:"normalized,omitempty"`
	CLIVersion     string `json:"cli_version,omitempty"`
}

// ToolOrphanOutputEvidence is reported at the end of the thread, when the
// file's Codex version is known; Normalized as for ToolOrphanCallEvidence.
type ToolOrphanOutputEvidence struct {
	CallID    string `json:"call_id"`
	ItemType  string `json:"item_type"`
	ItemIndex int    `json:"item_index"`
	// CallLine is the line of its call when the call comes later: Codex
	// pairs them by call_id and neither drops the output nor answers the call.
	CallLine   int    `json:"call_line,omitempty"`
	Normalized *bool  `json:"normalized,omitempty"`
	CLIVersion string `json:"cli_version,omitempty"`
}

// ToolDuplicateCallIDEvidence is the evidence of tool/duplicate-call-id: two
// tool calls with one call_id.
type ToolDuplicateCallIDEvidence struct {
	CallID    string `json:"call_id"`
	FirstLine int    `json:"first_line"`
	ItemIndex int    `json:"item_index"`
}

var (
	toolOrphanCall      = newKind()
	toolOrphanOutput    = newKind()
	toolDuplicateCallID = newKind()
)

func (ToolOrphanCallEvidence) Kind() Kind      { return toolOrphanCall }
func (ToolOrphanOutputEvidence) Kind() Kind    { return toolOrphanOutput }
func (ToolDuplicateCallIDEvidence) Kind() Kind { return toolDuplicateCallID }

// Turns and rollbacks.

// TurnUnclosedEvidence is the evidence of turn/unclosed: task_started with no
// task_complete or turn_aborted before the next turn (info at end of file).
type TurnUnclosedEvidence struct {
	TurnID string `json:"turn_id"`
	AtEOF  bool   `json:"at_eof"` // still open at the end of the file
}

// TurnIDMismatchEvidence is the evidence of turn/id-mismatch: a turn's
// closing event names another turn id.
type TurnIDMismatchEvidence struct {
	Started string `json:"started"`
	Closed  string `json:"closed"`
}

// PromptMissingFromHistoryEvidence: a turn whose prompt was announced by
// an event (user_message, or item_completed with a UserMessage) but whose
// history holds no user input item; Prompt is the first bytes of the
// event's text, Answered whether the turn left other items in the history
// (what the model sees of it on resume: answers without the question).
type PromptMissingFromHistoryEvidence struct {
	Prompt   string `json:"prompt"`
	Answered bool   `json:"answered"`
}

// RollbackTooManyEvidence: Derived when the user turns were counted from
// the history's user messages (the file has no task_started).
type RollbackTooManyEvidence struct {
	Requested int  `json:"requested"`
	Available int  `json:"available"`
	Derived   bool `json:"derived"`
}

// RollbackCompactedTurnEvidence: a rollback of NumTurns user turns drops
// the turn starting on TurnLine, which compacted (CompactionLine).
// ReplaysDropped: whether the file's Codex version (CLIVersion) rebuilds
// with the reverse replay of 0.107+ (nil: unknown); EarlierCompaction: a
// compaction came before the rolled-back turns (the rebuild starts there);
// Legacy: the turn's compaction has no replacement_history (a file of
// Codex before 0.107).
type RollbackCompactedTurnEvidence struct {
	NumTurns          int    `json:"num_turns"`
	TurnLine          int    `json:"turn_line"`
	CompactionLine    int    `json:"compaction_line"`
	EarlierCompaction bool   `json:"earlier_compaction"`
	Legacy            bool   `json:"legacy,omitempty"`
	ReplaysDropped    *bool  `json:"replays_dropped"`
	CLIVersion        string `json:"cli_version,omitempty"`
}

var rollbackCompactedTurn = newKind()

func (RollbackCompactedTurnEvidence) Kind() Kind { return rollbackCompactedTurn }

var (
	turnUnclosed             = newKind()
	turnIDMismatch           = newKind()
	promptMissingFromHistory = newKind()
	rollbackTooMany          = newKind()
)

func (TurnUnclosedEvidence) Kind() Kind             { return turnUnclosed }
func (TurnIDMismatchEvidence) Kind() Kind           { return turnIDMismatch }
func (PromptMissingFromHistoryEvidence) Kind() Kind { return promptMissingFromHistory }
func (RollbackTooManyEvidence) Kind() Kind          { return rollbackTooMany }

// World state.

// WorldStatePatchWithoutBaselineEvidence is the evidence of
// worldstate/patch-without-baseline: a world-state patch before any snapshot,
// or after a compaction before a new snapshot.
type WorldStatePatchWithoutBaselineEvidence struct {
	AfterCompaction bool `json:"after_compaction"`
}

// WorldStateNotObjectEvidence holds the JSON type of a state that is not an
// object, or the error of a patch that cannot be read.
type WorldStateNotObjectEvidence struct {
	JSONType string `json:"json_type,omitempty"`
	Error    string `json:"error,omitempty"`
}

// WorldStateEmptyPatchEvidence is the evidence of worldstate/empty-patch: a
// world-state patch that changes nothing.
type WorldStateEmptyPatchEvidence struct{}

// WorldStateNullInSnapshotEvidence is the evidence of
// worldstate/null-in-snapshot: a null inside a section of a full world-state
// snapshot.
type WorldStateNullInSnapshotEvidence struct {
	Paths []string `json:"paths"`
}

// WorldStateOrderEvidence is the evidence of worldstate/order: a world-state
// patch not preceded by model-visible history in its step.
type WorldStateOrderEvidence struct{}

// WorldStateDuplicateKeyEvidence is the evidence of worldstate/duplicate-key:
// a world-state snapshot or patch that repeats a key in one object.
type WorldStateDuplicateKeyEvidence struct {
	Keys  []string `json:"keys"`  // JSON pointers with the key (at most 5)
	Count int      `json:"count"` // all repeated keys of the record
}

var (
	worldStatePatchWithoutBaseline = newKind()
	worldStateNotObject            = newKind()
	worldStateEmptyPatch           = newKind()
	worldStateNullInSnapshot       = newKind()
	worldStateOrder                = newKind()
	worldStateDuplicateKey         = newKind()
)

func (WorldStatePatchWithoutBaselineEvidence) Kind() Kind { return worldStatePatchWithoutBaseline }
func (WorldStateNotObjectEvidence) Kind() Kind            { return worldStateNotObject }
func (WorldStateEmptyPatchEvidence) Kind() Kind           { return worldStateEmptyPatch }
func (WorldStateNullInSnapshotEvidence) Kind() Kind       { return worldStateNullInSnapshot }
func (WorldStateOrderEvidence) Kind() Kind                { return worldStateOrder }
func (WorldStateDuplicateKeyEvidence) Kind() Kind         { return worldStateDuplicateKey }

// Compactions and the context-window lineage.

// CompactionLegacyEvidence is the evidence of compaction/legacy: compacted
// without replacement_history.
type CompactionLegacyEvidence struct{}

// CompactionEmptyHistoryEvidence: replacement_history is [] although the
// thread had ItemsBefore items.
type CompactionEmptyHistoryEvidence struct {
	ItemsBefore int `json:"items_before"`
}

// CompactionLostPromptEvidence: replacement_history (Items items) drops the
// last user message (its first bytes: Prompt).
type CompactionLostPromptEvidence struct {
	Prompt string `json:"prompt"`
	Items  int    `json:"items"`
}

// CompactionMetadataLengthEvidence is the evidence of
// compaction/metadata-length: replacement_history_metadata length differs
// from replacement_history.
type CompactionMetadataLengthEvidence struct {
	History  int `json:"history"`
	Metadata int `json:"metadata"`
}

// CompactionWindowNumberEvidence is the evidence of compaction/window-number:
// window_number does not grow by 1.
type CompactionWindowNumberEvidence struct {
	Want int64 `json:"want"`
	Got  int64 `json:"got"`
}

// CompactionWindowLineageEvidence is the evidence of
// compaction/window-lineage: first_window_id changes, or previous_window_id
// is not the prior window id.
type CompactionWindowLineageEvidence struct {
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// CompactionWindowIDEvidence is the evidence of compaction/window-id: a
// window id that is not a UUIDv7 (numeric legacy form: info).
type CompactionWindowIDEvidence struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Numeric bool   `json:"numeric"` // the numeric legacy form
}

var (
	compactionLegacy         = newKind()
	compactionEmptyHistory   = newKind()
	compactionLostPrompt     = newKind()
	compactionMetadataLength = newKind()
	compactionWindowNumber   = newKind()
	compactionWindowLineage  = newKind()
	compactionWindowID       = newKind()
)

func (CompactionLegacyEvidence) Kind() Kind         { return compactionLegacy }
func (CompactionEmptyHistoryEvidence) Kind() Kind   { return compactionEmptyHistory }
func (CompactionLostPromptEvidence) Kind() Kind     { return compactionLostPrompt }
func (CompactionMetadataLengthEvidence) Kind() Kind { return compactionMetadataLength }
func (CompactionWindowNumberEvidence) Kind() Kind   { return compactionWindowNumber }
func (CompactionWindowLineageEvidence) Kind() Kind  { return compactionWindowLineage }
func (CompactionWindowIDEvidence) Kind() Kind       { return compactionWindowID }

// Inter-agent messages.

// AgentCommMissingIDEvidence is the evidence of agentcomm/missing-id: an
// inter_agent_communication without id in a file that uses ids.
type AgentCommMissingIDEvidence struct {
	Prefix string `json:"prefix"`
}

var agentCommMissingID = newKind()

func (AgentCommMissingIDEvidence) Kind() Kind { return agentCommMissingID }

// Token usage.

// TokensTotalDecreasedEvidence: Counter is the cumulative counter that
// fell: token_count's total_token_usage, or token_usage_record's
// thread_token_usage in files that carry those records.
type TokensTotalDecreasedEvidence struct {
	Previous int64  `json:"previous"`
	Got      int64  `json:"got"`
	Counter  string `json:"counter"`
}

// TokensOverWindowEvidence is the evidence of tokens/over-window:
// last_token_usage.total_tokens exceeds model_context_window.
type TokensOverWindowEvidence struct {
	Fill   int64 `json:"fill"`
	Window int64 `json:"window"`
}

// TokensReemittedEvidence is reported once, at the first re-emitted
// snapshot, with their number in the file.
type TokensReemittedEvidence struct {
	Count int `json:"count"`
}

var (
	tokensTotalDecreased = newKind()
	tokensOverWindow     = newKind()
	tokensReemitted      = newKind()
)

func (TokensTotalDecreasedEvidence) Kind() Kind { return tokensTotalDecreased }
func (TokensOverWindowEvidence) Kind() Kind     { return tokensOverWindow }
func (TokensReemittedEvidence) Kind() Kind      { return tokensReemitted }

// Flow facts: normal events, for observers other than the rules.

// FlowTurnStartedEvidence: Derived for a turn started at a user message in
// a file that persists no turn events (Codex before about 0.104).
type FlowTurnStartedEvidence struct {
	TurnID  string `json:"turn_id"`
	Window  int64  `json:"window"`
	Derived bool   `json:"derived"`
}

// FlowUserPromptEvidence: Tokens estimates the prompt (its JSON-encoded
// UTF-8 bytes).
type FlowUserPromptEvidence struct {
	TurnID string `json:"turn_id"`
	Tokens int64  `json:"tokens"`
}

// FlowTokenCountEvidence: Fill and Window from last_token_usage, the rest
// cumulative.
type FlowTokenCountEvidence struct {
	Fill   int64 `json:"fill"`
	Window int64 `json:"window"`
	Input  int64 `json:"input"`
	Cached int64 `json:"cached"`
	Output int64 `json:"output"`
	Total  int64 `json:"total"`
	// Timestamp is the record's, as written ("" when it has none).
	Timestamp string `json:"timestamp"`
}

// FlowCompactionEvidence is the evidence of a compaction replayed (a flow
// observation for the budget model and the viewers, not a finding): the
// context window it opens.
type FlowCompactionEvidence struct {
	WindowNumber int64 `json:"window_number"`
}

// FlowRollbackEvidence is the evidence of a thread_rolled_back replayed (a
// flow observation, not a finding): how many user turns it drops and the
// first line it drops.
type FlowRollbackEvidence struct {
	NumTurns int `json:"num_turns"`
	FromLine int `json:"from_line"` // the first dropped line
}

// FlowFramesReclaimEvidence is a frame-log stream reclamation rewrites.
type FlowFramesReclaimEvidence frames.ReclaimFacts

// FlowWorldStateEvidence follows every world_state line: State is the
// baseline after it (nil when there is none; values are immutable and
// shared, never copied).
type FlowWorldStateEvidence struct {
	State *mergepatch.Value `json:"state"`
	Full  bool              `json:"full"`
}

// FlowTimeAnchorEvidence: at a line whose timestamp does not parse,
// Before is the last valid time before it (Unix ms, 0 if none); at the
// first valid line after such lines (Pos zero), After is its time.
type FlowTimeAnchorEvidence struct {
	Before int64 `json:"before,omitempty"`
	After  int64 `json:"after,omitempty"`
}

var flowTimeAnchor = newKind()

func (FlowTimeAnchorEvidence) Kind() Kind { return flowTimeAnchor }

var (
	flowTurnStarted   = newKind()
	flowUserPrompt    = newKind()
	flowTokenCount    = newKind()
	flowCompaction    = newKind()
	flowRollback      = newKind()
	flowFramesReclaim = newKind()
	flowWorldState    = newKind()
)

func (FlowTurnStartedEvidence) Kind() Kind   { return flowTurnStarted }
func (FlowUserPromptEvidence) Kind() Kind    { return flowUserPrompt }
func (FlowTokenCountEvidence) Kind() Kind    { return flowTokenCount }
func (FlowCompactionEvidence) Kind() Kind    { return flowCompaction }
func (FlowRollbackEvidence) Kind() Kind      { return flowRollback }
func (FlowFramesReclaimEvidence) Kind() Kind { return flowFramesReclaim }
func (FlowWorldStateEvidence) Kind() Kind    { return flowWorldState }

// Context handoffs (handoffs.md), judged at the end of the file on the
// latest record of each id.

// HandoffOversizedEvidence (rule 1) is the budget at the target turn.
// DuplicateOf names an older copy of the same handoff that is kept.
type HandoffOversizedEvidence struct {
	ID          string `json:"id"`
	Tokens      int64  `json:"tokens"`
	Budget      int64  `json:"budget"`
	Window      int64  `json:"window"`
	Fill        int64  `json:"fill"`
	Prompt      int64  `json:"prompt"`
	Reserve     int64  `json:"reserve"`
	Cap         int64  `json:"cap"`
	TurnID      string `json:"turn_id"`
	AtEOF       bool   `json:"at_eof"`
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

// HandoffLostDeferredEvidence (rule 2).
type HandoffLostDeferredEvidence struct {
	ID             string `json:"id"`
	Tokens         int64  `json:"tokens"`
	DeliveryTurnID string `json:"delivery_turn_id"`
	TurnStatus     string `json:"turn_status"`
	DeferredLine   int    `json:"deferred_line"`
}

// HandoffStaleDeferredEvidence (rule 3).
type HandoffStaleDeferredEvidence struct {
	ID       string `json:"id"`
	Tokens   int64  `json:"tokens"`
	Delivery string `json:"delivery"`
}

// HandoffDuplicateDeferredEvidence (rule 4).
type HandoffDuplicateDeferredEvidence struct {
	ID               string `json:"id"`
	KeptID           string `json:"kept_id"`
	KeptLine         int    `json:"kept_line"`
	Items            int    `json:"items"`
	ProviderThreadID string `json:"provider_thread_id"`
}

// HandoffDoubleDeliveryEvidence (rule 5), at the second delivery.
type HandoffDoubleDeliveryEvidence struct {
	ID            string `json:"id"`
	FirstLine     int    `json:"first_line"`
	FirstDelivery string `json:"first_delivery"`
	Delivery      string `json:"delivery"`
	Deliveries    int    `json:"deliveries"`
}

// HandoffBadItemsEvidence (rule 6): the lists are capped, the counts not.
type HandoffBadItemsEvidence struct {
	ID           string   `json:"id"`
	Overlap      []string `json:"overlap"`
	OverlapCount int      `json:"overlap_count"`
	Unknown      []string `json:"unknown"`
	UnknownCount int      `json:"unknown_count"`
}

// HandoffAbandonedEvidence (rule 7).
type HandoffAbandonedEvidence struct {
	ID               string `json:"id"`
	Tokens           int64  `json:"tokens"`
	TurnID           string `json:"turn_id"`
	TurnLine         int    `json:"turn_line"`
	ProviderThreadID string `json:"provider_thread_id"`
}

var (
	handoffOversized         = newKind()
	handoffLostDeferred      = newKind()
	handoffStaleDeferred     = newKind()
	handoffDuplicateDeferred = newKind()
	handoffDoubleDelivery    = newKind()
	handoffBadItems          = newKind()
	handoffAbandoned         = newKind()
)

func (HandoffOversizedEvidence) Kind() Kind         { return handoffOversized }
func (HandoffLostDeferredEvidence) Kind() Kind      { return handoffLostDeferred }
func (HandoffStaleDeferredEvidence) Kind() Kind     { return handoffStaleDeferred }
func (HandoffDuplicateDeferredEvidence) Kind() Kind { return handoffDuplicateDeferred }
func (HandoffDoubleDeliveryEvidence) Kind() Kind    { return handoffDoubleDelivery }
func (HandoffBadItemsEvidence) Kind() Kind          { return handoffBadItems }
func (HandoffAbandonedEvidence) Kind() Kind         { return handoffAbandoned }

// Streaming frame logs (frames.md), replayed by package frames, which
// defines their facts.

// FrameDeltaMismatchEvidence is the evidence of frames/delta-mismatch:
// a block's concatenated deltas differ from its *_end content or tool-call
// arguments.
type FrameDeltaMismatchEvidence frames.MismatchFacts

// FrameUnterminatedEvidence is the evidence of frames/unterminated: a
// block whose deltas never end.
type FrameUnterminatedEvidence frames.UnterminatedFacts

// FrameSupersededBytesEvidence is the evidence of frames/superseded-bytes:
// bytes held by superseded deltas (what reclamation would free).
type FrameSupersededBytesEvidence frames.SupersededFacts

// FrameUnknownTypeEvidence is the evidence of frames/unknown-type: a frame
// type this version does not know (kept verbatim, counted).
type FrameUnknownTypeEvidence frames.UnknownTypeFacts

var (
	frameDeltaMismatch   = newKind()
	frameUnterminated    = newKind()
	frameSupersededBytes = newKind()
	frameUnknownType     = newKind()
)

func (FrameDeltaMismatchEvidence) Kind() Kind   { return frameDeltaMismatch }
func (FrameUnterminatedEvidence) Kind() Kind    { return frameUnterminated }
func (FrameSupersededBytesEvidence) Kind() Kind { return frameSupersededBytes }
func (FrameUnknownTypeEvidence) Kind() Kind     { return frameUnknownType }
