// Package stateview is the designed view of a reconstructed thread state
// and the one comparison of two states: what `rollout state` prints, what
// `rollout diff` compares, and what reclaim's proof requires to be equal
// before it rewrites a file. It is a model derived from a replay
// (internal/derive): after reconstruct (it reads a State) and before the
// printers (internal/output/report); it never prints.
//
// A View is the public shape, not the engine's structs: JSON names, raw
// JSON values as the file holds them, slices never nil. Compare reports
// each difference as a Change: a path into the view spelled with those
// names (history[5].id, world_state.files["a.go"]), both values and the
// lines of the turn, item or handoff it is in.
package stateview

import (
	"encoding/json"

	"github.com/rollout-dev/rollout/reconstruct"
)

// View is the state as resume rebuilds it.
type View struct {
	ThreadID    string `json:"thread_id"`
	Era         string `json:"era"`
	HistoryMode string `json:"history_mode"`
	CLIVersion  string `json:"cli_version"`
	// Records is the number of lines read: a fact of the file, which
	// Compare leaves out (two files of one thread differ in it).
	Records    int             `json:"records"`
	Turns      []Turn          `json:"turns"`
	History    []Item          `json:"history"`
	WorldState json.RawMessage `json:"world_state"` // null when there is no baseline
	Lineage    Lineage         `json:"lineage"`
	Tokens     *Tokens         `json:"token_usage"` // null before the first token_count
	Settings   *Settings       `json:"settings"`    // null before the first turn_context
	// DynamicTools is the thread's dynamic tool set after the newest
	// record that sets it (Codex 0.171); absent when none declares one.
	DynamicTools *DynamicTools `json:"dynamic_tools,omitempty"`
	Handoffs     []Handoff     `json:"handoffs"`
	// Inherits are the rollouts the file continues (a paginated fork's or
	// revert's lineage, root first), replayed before it; absent when it
	// continues none, or they were not found (docs/lineage.md).
	Inherits []Inherit `json:"inherits,omitempty"`
	// Input is what Codex sends on resume (internal/derive/resumeinput),
	// when the caller asked for it (`rollout diff --items`): compared item
	// by item as JSON values.
	Input []json.RawMessage `json:"input,omitempty"`
	// LeftOut are the response_items of a type no Codex knows: Codex
	// leaves them out of every request, so the history does; absent when
	// there are none. A fact of the file, which Compare leaves out.
	LeftOut *LeftOut `json:"left_out,omitempty"`
}

// LeftOut counts the items left out and lists the first of them
// (reconstruct.MaxLeftOut).
type LeftOut struct {
	Count int           `json:"count"`
	Items []LeftOutItem `json:"items"`
}

// LeftOutItem is one item left out of the history.
type LeftOutItem struct {
	Line    int    `json:"line"`
	Type    string `json:"type"`
	Rollout string `json:"rollout,omitempty"` // as Item.Rollout
}

// Inherit is one rollout of a lineage and the cutoff the thread inherits
// it up to.
type Inherit struct {
	RolloutID  string `json:"rollout_id"`
	Path       string `json:"path"`
	EndOffset  int64  `json:"end_byte_offset"`
	EndOrdinal int64  `json:"end_ordinal_exclusive"`
}

// Settings are the previous-turn settings resume restores: from the
// newest surviving turn_context, or from a later compaction's
// resume_metadata, whose every field is authoritative (null: none). The
// values are the file's JSON.
type Settings struct {
	Source               string          `json:"source"` // "turn_context" or "compacted.resume_metadata"
	Line                 int             `json:"line"`
	PreviousTurnSettings json.RawMessage `json:"previous_turn_settings"` // {model, comp_hash, realtime_active}
	MultiAgentVersion    json.RawMessage `json:"multi_agent_version"`
	LastStartedTurnID    json.RawMessage `json:"last_started_turn_id"`
}

// DynamicTools is the set of dynamic tools (tools the app-server client
// declared at thread/start) a resume of the thread offers the model: from
// session_meta.dynamic_tools, a dynamic_tools_updated record, or, after a
// compaction checkpoint, its resume_metadata.dynamic_tools.
type DynamicTools struct {
	Source string          `json:"source"` // "session_meta", "dynamic_tools_updated" or "compacted.resume_metadata"
	Line   int             `json:"line"`
	Names  []string        `json:"names"` // a namespace's tools as NAMESPACE.NAME
	Tools  json.RawMessage `json:"tools"` // the tool specs as the file has them
}

// Turn is one turn segment.
type Turn struct {
	ID         string `json:"id"`
	Line       int    `json:"line"`
	Status     string `json:"status"`
	User       bool   `json:"user_turn"`
	RolledBack bool   `json:"rolled_back"`
	// Derived: the file persists no turn events (Codex before about 0.104),
	// so the turn starts at a user message, as Codex's rollback counts it.
	Derived bool `json:"derived,omitempty"`
	// Rollout is the rollout id of the inherited rollout the turn is in
	// (Line is that file's); absent for the file's own.
	Rollout string `json:"rollout,omitempty"`
}

// Item is one item of the live model history.
type Item struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	CallID string `json:"call_id,omitempty"`
	Line   int    `json:"line"`
	Index  *int   `json:"replacement_index,omitempty"` // inside the line's replacement_history
	// Synthesized names an item Codex makes on resume from the record at
	// Line: "compaction_summary" or "compaction_bridge" (a legacy
	// compaction's user message), "aborted_output" (the output Codex sends
	// for the call at Line, which has none).
	Synthesized string `json:"synthesized,omitempty"`
	// Rollout is the rollout id of the inherited rollout the item is in
	// (Line is that file's); absent for the file's own.
	Rollout string `json:"rollout,omitempty"`
	// content is a hash of the item's bytes, only in a view made by
	// OfHashed. It is compared, never printed: the hash is seeded per
	// process, and a change is reported as history[N].content.
	content uint64
}

// Lineage is the context-window chain.
type Lineage struct {
	FirstWindowID string `json:"first_window_id"`
	WindowID      string `json:"window_id"`
	WindowNumber  int64  `json:"window_number"`
}

// Tokens is the token usage restored on resume.
type Tokens struct {
	Line        int   `json:"line"`
	Fill        int64 `json:"context_fill"`
	Window      int64 `json:"model_context_window"`
	TotalTokens int64 `json:"total_tokens"`
	Input       int64 `json:"input_tokens"`
	Cached      int64 `json:"cached_input_tokens"`
	Output      int64 `json:"output_tokens"`
	Requests    int   `json:"requests"`
	Reemitted   int   `json:"reemitted"`
}

// Handoff is the latest record of one context handoff.
type Handoff struct {
	ID     string          `json:"id"`
	Line   int             `json:"line"`
	Record json.RawMessage `json:"record"`
}

// Of is the view of st.
func Of(st *reconstruct.State) View { return of(st, false) }

// OfHashed is the view of st with each item's content hash, for a state
// replayed with ReplayOptions.HashItems (items whose content was not
// hashed have none).
func OfHashed(st *reconstruct.State) View { return of(st, true) }

func of(st *reconstruct.State, hashes bool) View {
	v := View{ThreadID: st.ThreadID, Era: string(st.Era), HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion,
		Records: st.Records, Turns: []Turn{}, History: []Item{}, Handoffs: []Handoff{},
		WorldState: json.RawMessage("null"),
		Lineage:    Lineage{st.Lineage.FirstWindowID, st.Lineage.WindowID, st.Lineage.WindowNumber}}
	rolloutOf := func(seg int) string {
		if seg > 0 && seg <= len(st.Segments) {
			return st.Segments[seg-1].RolloutID
		}
		return ""
	}
	for _, s := range st.Segments {
		v.Inherits = append(v.Inherits, Inherit{s.RolloutID, s.Path, s.End, s.EndOrdinal})
	}
	for _, t := range st.Turns {
		v.Turns = append(v.Turns, Turn{t.ID, t.StartLine, t.Status, t.User, t.RolledBack, t.Derived, rolloutOf(t.Segment)})
	}
	if st.History != nil {
		for it := range st.History.All() {
			j := Item{ID: it.ID, Type: it.Type, CallID: it.CallID, Line: it.Line, Rollout: rolloutOf(it.Segment)}
			switch {
			case it.Index >= 0:
				idx := it.Index
				j.Index = &idx
			case it.Index == reconstruct.SummaryIndex:
				j.Synthesized = "compaction_summary"
			case it.Index == reconstruct.BridgeIndex:
				j.Synthesized = "compaction_bridge"
			case it.Index == reconstruct.AbortedIndex:
				j.Synthesized = "aborted_output"
			}
			if h, ok := it.ContentHash(); hashes && ok {
				j.content = h
			}
			v.History = append(v.History, j)
		}
	}
	if st.LeftOutCount > 0 {
		v.LeftOut = &LeftOut{Count: st.LeftOutCount, Items: []LeftOutItem{}}
		for _, x := range st.LeftOut {
			v.LeftOut.Items = append(v.LeftOut.Items, LeftOutItem{x.Line, x.Type, rolloutOf(x.Segment)})
		}
	}
	if st.WorldState != nil {
		v.WorldState = st.WorldState.AppendJSON(nil)
	}
	if t := st.Tokens; t != nil {
		v.Tokens = &Tokens{t.Line, t.Fill, t.Window, t.TotalTokens, t.InputTokens, t.CachedInput, t.OutputTokens, t.RequestsSeen, st.Reemitted}
	}
	if x := st.Settings; x != nil {
		v.Settings = &Settings{Source: x.Source, Line: x.Line, PreviousTurnSettings: orNull(x.Previous),
			MultiAgentVersion: orNull(x.MultiAgentVersion), LastStartedTurnID: orNull(x.LastStartedTurnID)}
	}
	if d := st.DynamicTools; d != nil {
		v.DynamicTools = &DynamicTools{Source: d.Source, Line: d.Line, Names: append([]string{}, d.Names...), Tools: orNull(d.Raw)}
	}
	for _, id := range st.HandoffIDs() {
		h := st.Handoffs[id]
		v.Handoffs = append(v.Handoffs, Handoff{h.ID, h.Line, json.RawMessage(h.Raw)})
	}
	return v
}

// orNull is raw, or the JSON null for nil.
func orNull(raw []byte) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return json.RawMessage(raw)
}
