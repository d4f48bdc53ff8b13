// Package budget is the what-if model behind `rollout simulate-budget`. It
// sits after the replay engine: a Collector follows the engine's flow
// observations (token counts, compactions, turns, rollbacks) and keeps the
// evidence of docs/spec budget.md, a few integers per model request;
// Simulate replays that evidence under other context windows, compaction
// thresholds, handoff budgets and ledgers into a Result (one rollout) or a
// Fleet (many). It is a model of internal/derive: internal/output/report
// writes it in every format, and the package never prints and never reads
// flags.
package budget

import (
	"time"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Request is one model request: a token_count with info, not a re-emitted
// duplicate, not rolled back.
type Request struct {
	Line   int   // line of its token_count
	Fill   int64 // last_token_usage.total_tokens (input + output when missing)
	Window int64 // model_context_window recorded with it (0: none)
	Input  int64 // last_token_usage.input_tokens
	Cached int64 // last_token_usage.cached_input_tokens
	Output int64 // last_token_usage.output_tokens
	// At is when its token_count was written (Unix nanoseconds; 0 when the
	// line has no valid timestamp): the order of a shared ledger.
	At int64
	// Growth is what the request adds to the context in the model: the
	// whole fill for the first request (F0), 0 for the first request after
	// a recorded compaction, otherwise Fill minus the previous Fill.
	Growth int64
	// AfterCompaction marks the first request after a recorded compaction;
	// its Fill is a recorded post-compaction fill.
	AfterCompaction bool
}

// Turn is one started turn (task_started) that was not rolled back.
type Turn struct {
	Line         int
	ID           string
	Window       int64 // task_started.model_context_window (0: none)
	PromptTokens int64 // its first user prompt, in reconstruct.PromptTokens units
	// FirstRequest is the 0-based index of the first request after the
	// turn's start (len(Requests) when none follows).
	FirstRequest int
}

// Compaction is one recorded compaction (a `compacted` line).
type Compaction struct {
	Line int
	// Request is the 0-based index of the first request after it
	// (len(Requests) when none follows).
	Request int
}

// Handoff is one recorded context handoff that targets this thread: the
// latest record of a ready handoff (superseded, failed or unprepared ones
// are never delivered), taken from the engine's state by Evidence.
type Handoff struct {
	ID     string
	Line   int
	Tokens int64 // history.tokens
	// TargetTurn is the 0-based index into Turns of the turn it was
	// prepared for; -1 when that turn is not in the rollout (it is then
	// judged at the end of the file with a prompt of 0 tokens).
	TargetTurn int
}

// Evidence is what a recorded thread tells the model. Its size is a few
// integers per request and turn, never the size of the file.
type Evidence struct {
	Path string
	// ThreadID, ParentThreadID and StartedAt come from session_meta (see
	// reconstruct.State); Evidence fills them when given the state.
	ThreadID       string
	ParentThreadID string
	StartedAt      string
	Requests       []Request
	Turns          []Turn
	Compactions    []Compaction
	Handoffs       []Handoff
	// Window is the recorded context window: that of the last request
	// that has one, else that of the last turn that has one, else the last
	// one seen in rolled-back lines (the model's window survives a
	// rollback), else 0.
	Window int64
}

// F0 is the initial context: the fill of the first request (0 without
// requests).
func (ev *Evidence) F0() int64 {
	if len(ev.Requests) == 0 {
		return 0
	}
	return ev.Requests[0].Fill
}

// PostCompactionFills lists the recorded fills of the first requests after
// recorded compactions, in order.
func (ev *Evidence) PostCompactionFills() []int64 {
	var out []int64
	for _, r := range ev.Requests {
		if r.AfterCompaction {
			out = append(out, r.Fill)
		}
	}
	return out
}

// DefaultPostCompact is the post-compaction fill the model uses when none
// is given: the mean of the recorded post-compaction fills, rounded down,
// or F0 when there are none.
func (ev *Evidence) DefaultPostCompact() int64 {
	fills := ev.PostCompactionFills()
	if len(fills) == 0 {
		return ev.F0()
	}
	var sum int64
	for _, f := range fills {
		sum += f
	}
	return sum / int64(len(fills))
}

// CompactionRequests lists the 1-based request numbers of the recorded
// compactions: the first request after each (len(Requests)+1 when no
// request follows).
func (ev *Evidence) CompactionRequests() []int {
	out := make([]int, 0, len(ev.Compactions))
	for _, c := range ev.Compactions {
		out = append(out, c.Request+1)
	}
	return out
}

// Collector gathers the evidence from the engine's flow observations. Use
// its Observe method as an observer of reconstruct.Replay (or checks.Run),
// then call Evidence once the replay has finished.
type Collector struct {
	reqs     []Request
	turns    []Turn
	comps    []Compaction
	prompted []bool // per turn: its first prompt was seen
	anyWin   int64  // the last window seen, rolled back or not
}

// NewCollector returns an empty collector.
func NewCollector() *Collector { return &Collector{} }

// Observe takes one observation; it ignores everything but flow facts.
// Positions come from the observation order, not from lines, so several
// objects on one (concatenated) line keep their order.
func (c *Collector) Observe(o reconstruct.Observation) {
	if o.Pos.Inherited() {
		// A sub-agent's copy of its parent's context: the parent's
		// requests, counted in the parent.
		return
	}
	switch ev := o.Evidence.(type) {
	case reconstruct.FlowTokenCountEvidence:
		c.reqs = append(c.reqs, Request{Line: o.Pos.Line,
			Fill: ev.Fill, Window: ev.Window, Input: ev.Input, Cached: ev.Cached, Output: ev.Output, At: unixNano(ev.Timestamp)})
		c.noteWindow(ev.Window)
	case reconstruct.FlowCompactionEvidence:
		c.comps = append(c.comps, Compaction{Line: o.Pos.Line, Request: len(c.reqs)})
	case reconstruct.FlowTurnStartedEvidence:
		c.turns = append(c.turns, Turn{Line: o.Pos.Line, ID: ev.TurnID, Window: ev.Window, FirstRequest: len(c.reqs)})
		c.prompted = append(c.prompted, false)
		c.noteWindow(ev.Window)
	case reconstruct.FlowUserPromptEvidence:
		// The engine reports only the first prompt of the open turn, which
		// is the last turn started.
		if n := len(c.turns); n > 0 && !c.prompted[n-1] {
			c.turns[n-1].PromptTokens = ev.Tokens
			c.prompted[n-1] = true
		}
	case reconstruct.FlowRollbackEvidence:
		from := ev.FromLine
		c.reqs = c.reqs[:keepBefore(len(c.reqs), from, func(i int) int { return c.reqs[i].Line })]
		c.comps = c.comps[:keepBefore(len(c.comps), from, func(i int) int { return c.comps[i].Line })]
		n := keepBefore(len(c.turns), from, func(i int) int { return c.turns[i].Line })
		c.turns, c.prompted = c.turns[:n], c.prompted[:n]
	}
}

func (c *Collector) noteWindow(w int64) {
	if w > 0 {
		c.anyWin = w
	}
}

// keepBefore returns how many leading elements lie before line from. It
// scans from the end, so the cost is the number of dropped elements.
func keepBefore(n, from int, line func(int) int) int {
	for n > 0 && line(n-1) >= from {
		n--
	}
	return n
}

// unixNano reads a record's timestamp (0 when it has none that parses).
func unixNano(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixNano()
}

// Evidence finishes the collection: growth per request, the requests that
// follow recorded compactions, and the recorded window. st, the engine's
// final state, may be nil; when given, it names the turns whose id was
// only known from a later turn_context line.
func (c *Collector) Evidence(st *reconstruct.State) *Evidence {
	ev := &Evidence{Requests: c.reqs, Turns: c.turns, Compactions: c.comps}
	if ev.Requests == nil {
		ev.Requests = []Request{}
	}
	if ev.Turns == nil {
		ev.Turns = []Turn{}
	}
	if ev.Compactions == nil {
		ev.Compactions = []Compaction{}
	}
	ev.Handoffs = []Handoff{}
	for _, cp := range ev.Compactions {
		if cp.Request < len(ev.Requests) {
			ev.Requests[cp.Request].AfterCompaction = true
		}
	}
	for i := range ev.Requests {
		r := &ev.Requests[i]
		switch {
		case i == 0:
			r.Growth = r.Fill
		case r.AfterCompaction:
			r.Growth = 0
		default:
			r.Growth = r.Fill - ev.Requests[i-1].Fill
		}
		if r.Window > 0 {
			ev.Window = r.Window
		}
	}
	if ev.Window == 0 {
		for _, t := range ev.Turns {
			if t.Window > 0 {
				ev.Window = t.Window
			}
		}
	}
	if ev.Window == 0 {
		ev.Window = c.anyWin
	}
	if st != nil {
		ev.ThreadID, ev.ParentThreadID, ev.StartedAt = st.ThreadID, st.ParentThreadID, st.StartedAt
		// Both lists are in line order: one merge pass.
		j := 0
		for i := range ev.Turns {
			t := &ev.Turns[i]
			for j < len(st.Turns) && st.Turns[j].StartLine < t.Line {
				j++
			}
			if t.ID == "" && j < len(st.Turns) && st.Turns[j].StartLine == t.Line {
				t.ID = st.Turns[j].ID
			}
		}
		ev.Handoffs = recordedHandoffs(st, ev.Turns)
	}
	return ev
}

// recordedHandoffs lists the ready handoffs for this thread in the order of
// their latest record, each at its target turn (-1: not in the rollout).
func recordedHandoffs(st *reconstruct.State, turns []Turn) []Handoff {
	index := make(map[string]int, len(turns))
	for i, t := range turns {
		if _, dup := index[t.ID]; !dup && t.ID != "" {
			index[t.ID] = i
		}
	}
	out := []Handoff{}
	for _, id := range st.HandoffIDs() {
		h := st.Handoffs[id]
		if !h.ForThisThread || h.Status != "ready" {
			continue
		}
		target, ok := index[h.TargetTurnID]
		if !ok {
			target = -1
		}
		out = append(out, Handoff{ID: h.ID, Line: h.Line, Tokens: h.Tokens, TargetTurn: target})
	}
	return out
}
