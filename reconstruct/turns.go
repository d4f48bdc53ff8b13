package reconstruct

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/rollout"
)

type turnState struct {
	ID         string
	Pos        Pos
	Status     string
	User       bool
	RolledBack bool
	prompted   bool
	cp         checkpoint
	window     int64 // task_started.model_context_window (handoff budgets)
	prompt     int   // tokens of its first user prompt (handoff budgets)
	// derived: started at a user message because the file persists no turn
	// events (Codex before about 0.104); such a turn has no closing event.
	derived bool
	// idFromContext: ID came from a turn_context, not from the turn's
	// own events.
	idFromContext bool
	// compactedAt is the line of the turn's first compaction with a
	// replacement_history (made in it, or after it before the next turn);
	// compactedBefore: one came before the turn.
	compactedAt     int
	compactedBefore bool
	// compactedLegacy: that compaction has no replacement_history.
	compactedLegacy bool
}

// checkpoint is what a rollback restores: the state at the start of a turn.
// Values are shared, never copied: world-state values and token infos are
// immutable (replaced, never changed in place), and a
// History only grows by append until a compaction starts a new one, so its
// first n items are the history at the checkpoint.
type checkpoint struct {
	history      *History
	n            int
	world        *mergepatch.Value
	lineage      Lineage
	afterCompact bool
	tokens       *TokenInfo
	settings     *Settings
}

func (e *engine) checkpoint() checkpoint {
	e.ownTokens = false // the checkpoint holds st.Tokens now
	return checkpoint{history: e.st.History, n: e.st.History.Len(), world: e.st.WorldState, lineage: e.st.Lineage, afterCompact: e.afterCompact, tokens: e.st.Tokens, settings: e.st.Settings}
}

func (e *engine) event(rec *rollout.Record, pos Pos) {
	raw := rec.PayloadBytes()
	var evType, message, info []byte
	rec.PayloadMembers(func(key []byte, start, end int) bool {
		switch string(key) {
		case "type":
			evType = raw[start:end]
		case "message":
			message = raw[start:end]
		case "info":
			if info == nil { // the first, as the Get it replaces
				info = raw[start:end]
			}
		}
		return true
	})
	kind := eventKind(evType)
	if kind == "user_message" {
		text := rollout.DecodeString(message)
		e.userInput(pos, text)
		e.prompts.event(pos, text, fromUserMessage)
		return
	}
	if kind == "" {
		return // an event the replay does not follow: its payload stays unparsed
	}
	if kind == "token_count" {
		e.tokenCount(rec, pos, info) // the most frequent: read without gjson
		return
	}
	p := rec.Payload()
	switch kind {
	case "task_started", "turn_started":
		e.judgePrompts()
		e.turnEvents = true
		switch {
		case e.turn != nil && e.turn.derived:
			e.turn.Status = "completed" // a derived turn never has a closing event
		case e.turn != nil:
			e.emit(e.turn.Pos, TurnUnclosedEvidence{TurnID: e.turn.ID})
			e.turn.Status = "unclosed"
		}
		t := &turnState{ID: p.Get("turn_id").String(), Pos: pos, Status: "open", cp: e.checkpoint(), window: p.Get("model_context_window").Int(),
			compactedBefore: e.rhCompactions > 0}
		if prev := e.lastTurn(); prev != nil && prev.idFromContext && t.ID != "" && prev.ID == t.ID {
			// The turn_context that named the previous turn was this one's.
			prev.ID, prev.idFromContext = "", false
		}
		if t.ID == "" {
			t.ID, t.idFromContext = e.contextTurnID, e.contextTurnID != ""
		}
		e.contextTurnID = ""
		e.turns = append(e.turns, t)
		e.turn = t
		e.emit(pos, FlowTurnStartedEvidence{TurnID: t.ID, Window: t.window})
	case "task_complete", "turn_complete", "turn_aborted":
		e.judgePrompts()
		if e.turn == nil {
			return
		}
		closing := p.Get("turn_id").String()
		switch {
		case closing == "":
		case e.turn.ID == "" || e.turn.idFromContext:
			// The closing event names the turn: it is the turn's own.
			e.turn.ID, e.turn.idFromContext = closing, false
		case closing != e.turn.ID:
			e.emit(pos, TurnIDMismatchEvidence{Started: e.turn.ID, Closed: closing})
		}
		e.turn.Status = "completed"
		if p.Get("type").Str == "turn_aborted" {
			e.turn.Status = "aborted"
		}
		e.turn = nil
	case "item_completed":
		// Paginated files persist the UI's view of each item (0.153 wraps
		// user and agent messages and command executions); only a user
		// message matters here: it is the counterpart of a user message
		// item, as user_message events are in legacy files. The model's
		// history is rebuilt from response items alone.
		if it := p.Get("item"); it.Get("type").Str == "UserMessage" {
			var b strings.Builder
			it.Get("content").ForEach(func(_, part gjson.Result) bool {
				b.WriteString(part.Get("text").Str)
				return true
			})
			e.userInput(pos, b.String())
			e.prompts.event(pos, b.String(), fromItemCompleted)
		}
	case "thread_rolled_back":
		e.rollback(pos, int(p.Get("num_turns").Int()))
	}
}

// turnContext attributes a turn_context's turn_id. Codex writes a turn's
// turn_context after its task_started, and in files without turn events
// (before 0.100) before its user message: so it names the open turn only
// when that turn started from an event and has no id yet, and otherwise
// the turn that starts next. A derived turn never takes a turn_context
// seen inside it: that one belongs to the next user message. (A file cut
// out of a longer one, a usage example, starts this way.)
func (e *engine) turnContext(pos Pos, rec *rollout.Record) {
	// The members read, each the first of its key as gjson's Get finds it,
	// in one walk of what the reader noted of the payload.
	var model, compHash, realtime, multiAgent, turnID []byte
	raw := rec.PayloadBytes()
	rec.PayloadMembers(func(key []byte, start, end int) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(gjson.ParseBytes(append(append([]byte{'"'}, key...), '"')).Str)
		}
		var dst *[]byte
		switch string(key) {
		case "model":
			dst = &model
		case "comp_hash":
			dst = &compHash
		case "realtime_active":
			dst = &realtime
		case "multi_agent_version":
			dst = &multiAgent
		case "turn_id":
			dst = &turnID
		}
		if dst != nil && *dst == nil {
			*dst = raw[start:end]
		}
		return true
	})
	e.turnContextSettings(pos, model, compHash, realtime, multiAgent, turnID)
	id := gjson.ParseBytes(turnID).String()
	if id == "" {
		return
	}
	if e.turn != nil && !e.turn.derived {
		if e.turn.ID == "" {
			e.turn.ID, e.turn.idFromContext = id, true
		}
		return
	}
	e.contextTurnID = id
}

// lastTurn is the latest turn, nil before the first.
func (e *engine) lastTurn() *turnState {
	if len(e.turns) == 0 {
		return nil
	}
	return e.turns[len(e.turns)-1]
}

// followedEvents are the event types event acts on.
var followedEvents = map[string]string{}

func init() {
	for _, k := range []string{"user_message", "task_started", "turn_started", "task_complete", "turn_complete",
		"turn_aborted", "item_completed", "thread_rolled_back", "token_count"} {
		followedEvents[k] = k
	}
}

// eventKind returns the event type if event follows it, else "": most
// events (reasoning, message deltas, command output) only need skipping,
// and decoding their type or payload was a sixth of verify on short lines.
func eventKind(v []byte) string {
	if s, ok := rollout.StringValue(v); ok {
		return followedEvents[string(s)]
	}
	return followedEvents[rollout.DecodeString(v)]
}

// userTurnBoundary starts a derived turn at a user message when the file
// has persisted no turn events so far. Codex's rollback
// (ContextManager::drop_last_n_user_turns, core/src/context_manager/history.rs)
// cuts the history at user messages, so a turn is the span from one user
// message to the next and its checkpoint is the history before the message.
func (e *engine) userTurnBoundary(pos Pos) {
	if e.turnEvents {
		return
	}
	e.judgePrompts()
	if e.turn != nil {
		e.turn.Status = "completed"
	}
	t := &turnState{Pos: pos, Status: "open", cp: e.checkpoint(), derived: true, ID: e.contextTurnID, idFromContext: e.contextTurnID != "",
		compactedBefore: e.rhCompactions > 0}
	e.contextTurnID = ""
	e.turns = append(e.turns, t)
	e.turn = t
	e.emit(pos, FlowTurnStartedEvidence{Derived: true})
}

// userInput marks the open turn as a user turn; its first prompt is
// reported with its size in tokens.
func (e *engine) userInput(pos Pos, text string) {
	if e.turn == nil {
		return
	}
	e.turn.User = true
	if !e.turn.prompted {
		e.turn.prompted = true
		e.turn.prompt = PromptTokens(text)
		e.emit(pos, FlowUserPromptEvidence{TurnID: e.turn.ID, Tokens: int64(e.turn.prompt)})
	}
}

func (e *engine) rollback(pos Pos, n int) {
	if n <= 0 {
		return
	}
	var user []int
	for i, t := range e.turns {
		if !t.RolledBack && t.User {
			user = append(user, i)
		}
	}
	if n > len(user) {
		// drop_last_n_user_turns drops every user turn and keeps what came
		// before the first; with no user turn it changes nothing.
		e.emit(pos, RollbackTooManyEvidence{Requested: n, Available: len(user), Derived: !e.turnEvents})
		if len(user) == 0 {
			return
		}
		n = len(user)
	}
	k := user[len(user)-n]
	from := e.turns[k]
	for _, t := range e.turns[k:] {
		t.RolledBack = true
	}
	for _, t := range e.turns[k:] {
		if t.compactedAt > 0 {
			// Judged at the end: a later compaction replaces the history.
			e.compactedRollbacks = append(e.compactedRollbacks, Observation{Pos: pos, Evidence: e.rollbackCompacted(n, t, from)})
			break
		}
	}
	e.turn = nil
	cp := from.cp
	if cp.history == e.st.History {
		e.hof.noteDropped(e.st.History, min(cp.n, e.st.History.Len()))
	} else {
		e.hof.noteDropped(e.st.History, 0)
	}
	e.st.History = cp.history
	e.st.History.truncate(cp.n)
	e.st.WorldState = cp.world
	e.st.Lineage = cp.lineage
	e.afterCompact = cp.afterCompact
	e.st.Tokens, e.ownTokens = cp.tokens, false
	e.st.Settings = cp.settings
	e.skipDecrease, e.skipThreadDecrease = true, true
	e.reindex()
	fromLine := from.Pos.Line
	if from.Pos.Segment > 0 {
		fromLine = 1 // a turn of the inherited prefix: every record of the file is dropped
	}
	e.emit(pos, FlowRollbackEvidence{NumTurns: n, FromLine: fromLine})
}

// PromptTokens estimates tokens as the reference implementation does: the
// UTF-8 byte length of the text encoded as a JSON string, quotes included
// (JSON.stringify's escaping: no HTML escaping).
func PromptTokens(text string) int {
	n := 2
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20:
			n += 6
		case r == utf8.RuneError && size == 1:
			n += 3 // decoded as U+FFFD
		default:
			n += size
		}
	}
	return n
}

// Since rust-v0.107.0 (QuirkReverseReplay) resume rebuilds the
// history in Session::reconstruct_history_from_rollout, scanning back to
// the newest surviving compaction. The scan takes the items after a
// compaction as the suffix to replay as soon as it meets the compaction,
// before it knows that the turn holding it is rolled back
// (openai/codex#32851, open): the rejected compaction's suffix is
// replayed. Before 0.107 a forward replay applied the compaction, then
// the rollback, to what it left.

// forwardReplay: the file's Codex version is known and rebuilds with the
// forward replay of before QuirkReverseReplay.
func (e *engine) forwardReplay() bool {
	replays, ok := Has(QuirkReverseReplay, e.st.ResumeVersion())
	return ok && !replays
}

// rollbackCompacted is the finding of a rollback of n user turns, the
// first of them first, that drops turn t, which holds a compaction.
//
// With 0.107+ the history is rebuilt from the item after the newest
// surviving compaction older than t's (the rolled-back compaction is
// replayed on the way and the rollback cut at its user messages): the
// surviving turns come back in that compaction's compacted form. With no
// older compaction the replay starts after t's own compaction, with no
// history before it: the rolled-back turn's later items come back and
// everything before is lost. A compaction after the rollback replaces the
// history and ends the matter (the finding is dropped).
//
// A legacy compaction (no replacement_history) is counted only in a file of
// a version before 0.107 (forwardReplay): Codex 0.104.0 rebuilds its form
// (the context, every user prompt and the summary as a user message), and
// the rollback then counts the summary as the newest user turn
// (conformance golden 0.104.0/rollback-compacted).
func (e *engine) rollbackCompacted(n int, t, first *turnState) RollbackCompactedTurnEvidence {
	ev := RollbackCompactedTurnEvidence{NumTurns: n, TurnLine: t.Pos.Line, CompactionLine: t.compactedAt,
		EarlierCompaction: first.compactedBefore, Legacy: t.compactedLegacy, CLIVersion: e.st.ResumeVersion()}
	if replays, ok := Has(QuirkReverseReplay, e.st.ResumeVersion()); ok {
		ev.ReplaysDropped = &replays
	}
	return ev
}

// turnContextSettings takes the settings of a turn_context: the fields of
// Codex's PreviousTurnSettings (model, comp_hash, realtime_active), the
// multi-agent runtime and the turn's id.
func (e *engine) turnContextSettings(pos Pos, model, compHash, realtime, multiAgent, turnID []byte) {
	if model == nil {
		return
	}
	prev := make([]byte, 0, 48+len(model)+len(compHash)+len(realtime))
	prev = append(append(prev, `{"model":`...), model...)
	prev = append(append(prev, `,"comp_hash":`...), rawOrNullBytes(compHash)...)
	prev = append(append(prev, `,"realtime_active":`...), rawOrNullBytes(realtime)...)
	e.st.Settings = &Settings{Source: SettingsFromTurnContext, Line: pos.Line, Previous: append(prev, '}'),
		MultiAgentVersion: rawValueBytes(multiAgent), LastStartedTurnID: rawValueBytes(turnID)}
}

// rawValueBytes is rawValue of a member's raw bytes (nil: absent): a copy,
// nil when absent or null.
func rawValueBytes(v []byte) []byte {
	if v == nil || string(v) == "null" {
		return nil
	}
	return bytes.Clone(v)
}

func rawOrNullBytes(v []byte) []byte {
	if b := rawValueBytes(v); b != nil {
		return b
	}
	return []byte("null")
}

// resumeMetadata takes the settings of a compaction's resume_metadata,
// every field as it says: absent or null is none.
func (e *engine) resumeMetadata(pos Pos, md gjson.Result) {
	st := &Settings{Source: SettingsFromResumeMetadata, Line: pos.Line,
		MultiAgentVersion: rawValue(md.Get("multi_agent_version")), LastStartedTurnID: rawValue(md.Get("last_started_turn_id"))}
	if prev := md.Get("previous_turn_settings"); prev.IsObject() {
		st.Previous = []byte(prev.Raw)
	}
	e.st.Settings = st
}

// rawValue is a JSON value's bytes, nil when absent or null.
func rawValue(v gjson.Result) []byte {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	return []byte(v.Raw)
}
