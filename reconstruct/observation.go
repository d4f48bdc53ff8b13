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
// (evidence*.go) that says what was seen, and is declared there beside it.
type Kind int

// kindCount is how many kinds newKind has made. Each evidence type declares
// its kind beside it (evidence*.go), so a new observation touches one file
// of the engine besides its emitter.
var kindCount Kind

func newKind() Kind {
	kindCount++
	return kindCount
}

// Kinds lists every kind.
func Kinds() []Kind {
	out := make([]Kind, 0, kindCount)
	for k := Kind(1); k <= kindCount; k++ {
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
