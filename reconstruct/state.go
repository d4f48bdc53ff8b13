package reconstruct

import (
	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/rollout"
)

// State is the thread as resume would reconstruct it.
type State struct {
	ThreadID    string
	Era         rollout.Era
	HistoryMode string
	// OrdinalBase is the first ordinal of a paginated fork or revert:
	// session_meta.history_base.end_ordinal_exclusive (0 otherwise).
	OrdinalBase int64
	CLIVersion  string
	Records     int // physical lines read
	Unread      int // lines over the maximum line size: not read, not replayed
	MetaLine    int
	// From the first session_meta: when the session started (its payload's
	// timestamp, else the line's; raw RFC 3339, "" when unknown) and the
	// thread that spawned it as a sub-agent ("" for a root thread).
	StartedAt      string
	ParentThreadID string

	// ResumeAs is the Codex version the replay resumed the file as
	// (Options.ResumeVersion), "" for the writer's: see ResumeVersion.
	ResumeAs string

	// Bridges are, by the line of its compacted record, the prompts each
	// bridge message of the history folds in (BridgeIndex): the bridge
	// era's history keeps them only inside that message.
	Bridges map[int][]Item

	// Segments are the inherited prefixes of other rollouts replayed
	// before the file (a paginated fork's or revert's lineage, root first):
	// Segment k of an item or turn is Segments[k-1].
	Segments []Segment

	Turns      []Turn
	History    *History          // the live model history, in order
	WorldState *mergepatch.Value // the current baseline; nil when there is none
	Lineage    Lineage
	Tokens     *TokenInfo // the last surviving token_count info
	Settings   *Settings  // the previous-turn settings resume restores (nil: none seen)
	// DynamicTools is the thread's dynamic tool set (nil: none declared);
	// IDAllocation the newest id_allocation record (nil: none);
	// NextItemCheckpoints the compactions that carry next_item_ordinal, in
	// order (a few per file). records171.go.
	DynamicTools        *DynamicTools
	IDAllocation        *IDAllocation
	NextItemCheckpoints []NextItemCheckpoint
	Handoffs            map[string]*Handoff

	UsesItemIDs  bool // some item carries a locally formed <prefix>_<uuid> id
	UnknownTypes int
	// LeftOut are the response_items of a type no Codex knows
	// (rollout.KnownItemType), which Codex reads as its catch-all variant
	// and leaves out of every request, so the history leaves them out too:
	// the first MaxLeftOut of them; LeftOutCount counts them all.
	LeftOut          []LeftOutItem
	LeftOutCount     int
	Reemitted        int // re-emitted token_count snapshots
	OrdinalsInLegacy int
	// FailClosed: the history mode is unknown, so nothing was replayed and
	// only line and envelope facts were reported.
	FailClosed bool
	// Clock: a verdict compared the last record's time with Options.Now
	// (ToolOrphanCallEvidence.SessionStopped), so a replay at another time
	// may judge the file otherwise. Continues: the file's session_meta has
	// a history_base and ReplayOptions.Ancestry was asked for it, so its
	// findings depend on other rollouts. Incremental runs read both again.
	Clock, Continues bool
}

// LeftOutItem is a response_item left out of the history.
type LeftOutItem struct {
	Line    int
	Segment int // as Pos.Segment
	Type    string
}

// MaxLeftOut bounds State.LeftOut: a file of a newer Codex may hold
// millions of an item type this version does not know.
const MaxLeftOut = 100

// UserTurnStarts are the start lines of the user turns that survive, in
// order: what a rollback of N turns counts back over.
func (s *State) UserTurnStarts() []int {
	var out []int
	for _, t := range s.Turns {
		if t.User && !t.RolledBack {
			out = append(out, t.StartLine)
		}
	}
	return out
}

// ResumeVersion is the Codex version whose resume the state is: the one
// the replay was asked to resume the file as, else the writer's
// (session_meta's cli_version). Every version-dependent choice of the
// replay (the quirks table) is made for it.
func (s *State) ResumeVersion() string {
	if s.ResumeAs != "" {
		return s.ResumeAs
	}
	return s.CLIVersion
}

// Turn is one turn segment.
type Turn struct {
	ID         string
	StartLine  int
	Status     string // "open", "completed", "aborted", "unclosed"
	User       bool   // holds a user message or an inter-agent message
	RolledBack bool
	Derived    bool // started at a user message: the file persists no turn events
	Segment    int  // whose record started it (Pos.Segment)
}

// Item is one model-history item.
type Item struct {
	ID       string
	Type     string
	CallID   string
	Line     int   // the line holding it
	Offset   int64 // that line's byte offset
	Index    int   // index inside the line's replacement_history; -1 for the line's payload; SummaryIndex, BridgeIndex
	Segment  int   // whose record holds it (Pos.Segment): Line and Offset are that rollout's
	answered bool
	prompt   bool // a user message that is not one of Codex's contextual fragments
	hash     uint64
	lazy     bool // hash not computed yet: see engine.contentHash
}

// Items Codex makes on resume, on no line of their own: from a legacy
// compacted record (one without replacement_history, Codex before 0.125;
// their Line is the record's), and for calls left without output.
const (
	// SummaryIndex is the user message Codex makes of the record's message
	// (the summary, sent verbatim).
	SummaryIndex = -2
	// BridgeIndex is the one user message Codex before 0.55 made instead of
	// the kept prompts and the summary: "You were originally given
	// instructions from a user ...", the prompts, then the summary.
	BridgeIndex = -3
	// AbortedIndex is the "aborted" output Codex sends for a call without
	// one; its Line is the call's.
	AbortedIndex = -4
)

// Synthesized reports whether the item is one Codex makes on resume
// (SummaryIndex, BridgeIndex, AbortedIndex) rather than one a line holds.
func (it Item) Synthesized() bool {
	return it.Index == SummaryIndex || it.Index == BridgeIndex || it.Index == AbortedIndex
}

// ContentHash is the hash of the item's bytes; false when it was not
// hashed (an item without an id, or one of a replay without HashItems
// whose id came only once).
func (it Item) ContentHash() (uint64, bool) { return it.hash, it.ID != "" && !it.lazy }

// Lineage is the context-window chain.
type Lineage struct {
	FirstWindowID string
	WindowID      string
	WindowNumber  int64
}

// TokenInfo is the token usage restored on resume.
type TokenInfo struct {
	Line          int
	Fill          int64 // last_token_usage.total_tokens: the context fill
	Window        int64 // model_context_window
	TotalTokens   int64 // cumulative total_token_usage.total_tokens
	InputTokens   int64 // cumulative
	CachedInput   int64 // cumulative
	OutputTokens  int64 // cumulative
	ReasoningOut  int64 // cumulative
	RequestsSeen  int   // de-duplicated token_count events replayed
	ReemittedSeen int
}

func (s *State) finish(e *engine) {
	s.Reemitted, s.OrdinalsInLegacy = e.reemitted, e.ordInLegacy
	s.FailClosed = e.failClosed
	s.Turns = s.Turns[:0]
	for _, t := range e.turns {
		s.Turns = append(s.Turns, Turn{ID: t.ID, StartLine: t.Pos.Line, Status: t.Status, User: t.User, RolledBack: t.RolledBack, Derived: t.derived, Segment: t.Pos.Segment})
	}
}

// Settings are the settings resume restores for the next turn: from the
// newest surviving turn_context, or, when a compaction after it carries
// resume_metadata, from that. Codex's CompactionResumeMetadata (newer than
// rust-v0.149.0-alpha.3; written by 0.171) holds "resume metadata that is
// not represented by the companion records after a compaction", each field
// "authoritative, including an intentionally absent value": a null there
// is no value, whatever a turn_context before it said. The values are the
// file's raw JSON; nil is null. Values are immutable, shared by turn
// checkpoints.
type Settings struct {
	Source string // "turn_context" or "compacted.resume_metadata"
	Line   int
	// Previous is previous_turn_settings {model, comp_hash,
	// realtime_active} (a turn_context's, or the metadata's).
	Previous          []byte
	MultiAgentVersion []byte
	LastStartedTurnID []byte
}

// Setting sources.
const (
	SettingsFromTurnContext    = "turn_context"
	SettingsFromResumeMetadata = "compacted.resume_metadata"
)
