package reconstruct

// Context handoffs (spec: handoffs.md). Records are event-sourced: the
// latest record with an id wins. The engine keeps that record, parsed, plus
// the little the earlier ones tell (first line, whether it was ever
// deferred, confirmed deliveries); each turn keeps its budget facts (window,
// fill, prompt: turnState); and the hashes of every item id seen anywhere.
// The lifecycle rules are judged in Finish, when every latest record and
// every turn id is known.

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

// Handoff budget constants of handoffs.md.
const (
	DefaultHandoffCap = 16000 // the budget cap unless configured
	HandoffCeiling    = 64000 // no budget exceeds it, whatever the cap
	HandoffMinReserve = 16000 // the reserve is at least this
)

// Delivery statuses of handoffs.md.
const (
	DeliveryPending  = "pending"  // written before sending: delivery uncertain
	DeliveryInjected = "injected" // native injection confirmed
	DeliveryInline   = "inline"   // sent inside the prompt, confirmed
)

// HandoffReserve is the part of a window of w tokens kept free for the turn
// itself: max(16000, ceil(w/4)).
func HandoffReserve(w int64) int64 {
	return max(HandoffMinReserve, ceilDiv4(w))
}

func ceilDiv4(w int64) int64 {
	if w <= 0 {
		return 0
	}
	return (w + 3) / 4
}

// HandoffBudget is the budget of handoffs.md for a turn of a window w with a
// context fill f and a prompt of p tokens:
//
//	max(0, min(cap, 64000, w - f - p - reserve(w)))
func HandoffBudget(w, f, p, cap int64) int64 {
	return max(0, min(cap, HandoffCeiling, w-f-p-HandoffReserve(w)))
}

// Handoff is one context handoff: its latest record, parsed, and what its
// earlier records tell.
type Handoff struct {
	ID      string
	Line    int // the latest record
	Offset  int64
	Ordinal *int64
	Segment int    // whose record the latest is (Pos.Segment)
	Raw     string // the payload of the latest record

	FirstLine int // its first record: the age of the handoff
	Records   int // records written with this id

	// Fields of the latest record ("" or nil when absent).
	Status              string // pending | ready | failed | superseded
	TargetTurnID        string
	ToProviderThreadID  string
	FromProviderThreads []string
	ItemIDs             []string // history.item_ids
	OmittedItemIDs      []string // history.omitted_item_ids
	Tokens              int64    // history.tokens
	Deferred            bool     // "deferred": true
	Delivery            string   // delivery.status; "" = no delivery
	DeliveryTurnID      string
	DeliveryThreadID    string // delivery.native_thread_id

	// WasDeferred: some record of this id had "deferred": true;
	// DeferredLine is the latest such record.
	WasDeferred  bool
	DeferredLine int
	// Deliveries counts confirmed deliveries: records whose confirmed
	// delivery differs from that of the record before them.
	Deliveries int
	// ForThisThread: it targets the provider thread of this rollout
	// (to_provider_thread_id absent or equal to session_meta.payload.id).
	// Set by Finish.
	ForThisThread bool
	// Budget is where it was judged against the budget (set by Finish; nil
	// for a handoff to another provider thread).
	Budget *HandoffBudgetAt

	seq         int    // order of first sighting, to order ties on one line
	lastSig     string // the confirmed delivery of the previous record, "" if none
	firstSig    string
	firstDeliv  int // line of the first confirmed delivery
	secondDeliv *Pos
	secondSig   string
}

// HandoffBudgetAt is the budget at the turn where a handoff is judged: its
// target turn, or the end of the file with a prompt of 0 tokens when the
// target turn is not in the rollout.
type HandoffBudgetAt struct {
	TurnID   string
	TurnLine int  // 0 at the end of the file
	AtEOF    bool // the target turn is not in the rollout
	Window   int64
	Fill     int64
	Prompt   int64
	Reserve  int64
	Cap      int64
	Budget   int64
	// Known is false when no window is recorded: the budget cannot be
	// judged and rule 1 is not applied.
	Known bool
}

// Confirmed reports whether the latest record has a confirmed delivery.
func (h *Handoff) Confirmed() bool {
	return h.Delivery == DeliveryInjected || h.Delivery == DeliveryInline
}

// Live reports whether the handoff may still be delivered: it is neither
// superseded nor failed.
func (h *Handoff) Live() bool { return h.Status != "superseded" && h.Status != "failed" }

// HandoffIDs lists the handoff ids in the order of their latest record.
func (s *State) HandoffIDs() []string {
	ids := make([]string, 0, len(s.Handoffs))
	for id := range s.Handoffs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := s.Handoffs[ids[i]], s.Handoffs[ids[j]]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.seq < b.seq
	})
	return ids
}

// handoffTracker is the engine's handoff state besides State.Handoffs.
type handoffTracker struct {
	seen map[uint64]struct{} // hashes of the item ids no longer live (the live ones are in engine.ids)
	n    int                 // handoffs seen
}

// noteHash remembers the hash of an item id for rule 6: ids dropped by a
// compaction or a rollback still name items of the rollout. Hashes keep
// this a few bytes per item, and only dropped items are noted: live ones
// are in engine.ids.
func (t *handoffTracker) noteHash(h uint64) {
	if t.seen == nil {
		t.seen = map[uint64]struct{}{}
	}
	t.seen[h] = struct{}{}
}

// knownID reports whether an item id was seen anywhere so far.
func (e *engine) knownID(id string) bool {
	_, live := e.ids.get(e.st.History, id)
	return live || e.hof.known(id)
}

// noteDropped remembers the ids of the items of h from index from on,
// which leave the history.
func (t *handoffTracker) noteDropped(h *History, from int) {
	var buf []byte
	for i := from; i < h.Len(); i++ {
		if x := h.item(i); x.idLen > 0 {
			buf = h.idText(buf[:0], x)
			t.noteHash(maphash.Bytes(hashSeed, buf))
		}
	}
}

func (t *handoffTracker) known(id string) bool {
	_, ok := t.seen[maphash.String(hashSeed, id)]
	return ok
}

// handoff reads one context_handoff record. A record without a string id
// cannot be attached to a handoff and is ignored.
func (e *engine) handoff(rec *rollout.Record, pos Pos, p gjson.Result) {
	id := p.Get("id")
	if id.Type != gjson.String || id.Str == "" {
		return
	}
	h := &Handoff{ID: id.Str, Line: pos.Line, Offset: pos.Offset, Ordinal: pos.Ordinal, Segment: pos.Segment, Raw: p.Raw,
		FirstLine: pos.Line, Records: 1}
	h.Status = str(p.Get("status"))
	h.TargetTurnID = str(p.Get("target_turn_id"))
	h.ToProviderThreadID = str(p.Get("to_provider_thread_id"))
	h.FromProviderThreads = strs(p.Get("from_provider_thread_ids"))
	hist := p.Get("history")
	h.ItemIDs = strs(hist.Get("item_ids"))
	h.OmittedItemIDs = strs(hist.Get("omitted_item_ids"))
	h.Tokens = hist.Get("tokens").Int()
	h.Deferred = p.Get("deferred").Type == gjson.True
	if d := p.Get("delivery"); d.IsObject() {
		h.Delivery = str(d.Get("status"))
		if h.Delivery == "" {
			h.Delivery = "unknown" // a delivery without status is still a delivery
		}
		h.DeliveryTurnID = str(d.Get("turn_id"))
		h.DeliveryThreadID = str(d.Get("native_thread_id"))
	}

	if prev := e.st.Handoffs[h.ID]; prev != nil {
		h.FirstLine, h.Records, h.seq = prev.FirstLine, prev.Records+1, prev.seq
		h.WasDeferred, h.DeferredLine, h.Deliveries = prev.WasDeferred, prev.DeferredLine, prev.Deliveries
		h.lastSig, h.firstSig, h.firstDeliv = prev.lastSig, prev.firstSig, prev.firstDeliv
		h.secondDeliv, h.secondSig = prev.secondDeliv, prev.secondSig
	} else {
		e.hof.n++
		h.seq = e.hof.n
	}
	if h.Deferred {
		h.WasDeferred, h.DeferredLine = true, pos.Line
	}
	sig := ""
	if h.Confirmed() {
		sig = h.Delivery + "\x00" + h.DeliveryThreadID + "\x00" + h.DeliveryTurnID
		if sig != h.lastSig {
			h.Deliveries++
			switch h.Deliveries {
			case 1:
				h.firstSig, h.firstDeliv = sig, pos.Line
			case 2:
				p := pos
				h.secondDeliv, h.secondSig = &p, sig
			}
		}
	}
	h.lastSig = sig
	e.st.Handoffs[h.ID] = h
}

// str is a string value; other types read as "".
func str(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}

func strs(v gjson.Result) []string {
	if !v.IsArray() {
		return nil
	}
	var out []string
	v.ForEach(func(_, x gjson.Result) bool {
		out = append(out, x.String())
		return true
	})
	return out
}

// handoffCap is the configured cap of the budget.
func (e *engine) handoffCap() int64 {
	if e.opts.HandoffCap > 0 {
		return e.opts.HandoffCap
	}
	return DefaultHandoffCap
}

// turnsByID maps each turn id to its turn: the first that was not rolled
// back, else the first.
func (e *engine) turnsByID() map[string]*turnState {
	m := make(map[string]*turnState, len(e.turns))
	for _, t := range e.turns {
		if t.ID == "" {
			continue
		}
		if prev, ok := m[t.ID]; !ok || (prev.RolledBack && !t.RolledBack) {
			m[t.ID] = t
		}
	}
	return m
}

// budgetAt computes the budget at a turn start from the latest token_count
// before it (restored across rollbacks, as resume does), or at the end of
// the file with a prompt of 0 when t is nil.
func (e *engine) budgetAt(t *turnState) HandoffBudgetAt {
	b := HandoffBudgetAt{Cap: e.handoffCap()}
	var tok *TokenInfo
	var turnWindow int64
	if t != nil {
		b.TurnID, b.TurnLine = t.ID, t.Pos.Line
		tok, turnWindow, b.Prompt = t.cp.tokens, t.window, int64(t.prompt)
	} else {
		b.AtEOF = true
		tok = e.st.Tokens
		for i := len(e.turns) - 1; i >= 0; i-- {
			if e.turns[i].window > 0 {
				turnWindow = e.turns[i].window
				break
			}
		}
	}
	if tok != nil {
		b.Window, b.Fill = tok.Window, tok.Fill
	}
	if b.Window <= 0 {
		b.Window = turnWindow // token_count without a window: the turn's
	}
	b.Known = b.Window > 0
	b.Reserve = HandoffReserve(b.Window)
	b.Budget = HandoffBudget(b.Window, b.Fill, b.Prompt, b.Cap)
	return b
}

// forThisThread: to_provider_thread_id absent, or equal to the thread id
// of session_meta. Without a session_meta only handoffs without a target
// provider thread are taken as this thread's.
func (e *engine) forThisThread(h *Handoff) bool {
	if h.ToProviderThreadID == "" {
		return true
	}
	return e.st.ThreadID != "" && strings.EqualFold(h.ToProviderThreadID, e.st.ThreadID)
}

// judgeHandoffs applies the lifecycle rules of handoffs.md to the latest
// record of each handoff.
func (e *engine) judgeHandoffs() {
	ids := e.st.HandoffIDs()
	if len(ids) == 0 {
		return
	}
	turns := e.turnsByID()
	// Candidates for rule 4: ready, not delivered, and deferred or about to
	// be (rule 1). Grouping both makes one repair final: it defers the
	// oldest copy and supersedes the others, instead of deferring every
	// copy and leaving duplicates for a second run.
	var waiting []*Handoff
	type oversize struct {
		pos Pos
		ev  HandoffOversizedEvidence
	}
	var oversized []oversize
	for _, id := range ids {
		h := e.st.Handoffs[id]
		pos := Pos{Line: h.Line, Offset: h.Offset, Ordinal: h.Ordinal, Segment: h.Segment}

		// Rule 5: a handoff is delivered at most once (any provider thread).
		if h.secondDeliv != nil {
			e.emit(*h.secondDeliv, HandoffDoubleDeliveryEvidence{ID: h.ID,
				FirstLine: h.firstDeliv, FirstDelivery: sigStatus(h.firstSig),
				Delivery: sigStatus(h.secondSig), Deliveries: h.Deliveries})
		}
		// Rule 6: item lists disjoint, every id an item of this rollout.
		e.checkHandoffItems(h, pos)

		h.ForThisThread = e.forThisThread(h)
		if !h.ForThisThread {
			continue
		}
		target := turns[h.TargetTurnID]
		b := e.budgetAt(target)
		h.Budget = &b

		// Rule 1: ready, not delivered, not deferred, does not fit. Emitted
		// after rule 4's grouping, which may name an older copy.
		if h.Status == "ready" && h.Delivery == "" && !h.Deferred && b.Known && h.Tokens > b.Budget {
			oversized = append(oversized, oversize{pos, HandoffOversizedEvidence{
				ID: h.ID, Tokens: h.Tokens, Budget: b.Budget, Window: b.Window, Fill: b.Fill,
				Prompt: b.Prompt, Reserve: b.Reserve, Cap: b.Cap, TurnID: h.TargetTurnID, AtEOF: b.AtEOF}})
			waiting = append(waiting, h) // it must be deferred: it waits like one
		}
		// Rule 2: a pending delivery that lost the marker after its turn ended.
		if h.Live() && h.Delivery == DeliveryPending && !h.Deferred && h.WasDeferred {
			t := target
			if dt := turns[h.DeliveryTurnID]; dt != nil {
				t = dt // the turn that attempted the delivery
			}
			if t != nil && t.Status != "open" {
				e.emit(pos, HandoffLostDeferredEvidence{ID: h.ID, Tokens: h.Tokens,
					DeliveryTurnID: t.ID, TurnStatus: t.Status, DeferredLine: h.DeferredLine})
			}
		}
		// Rule 3: a confirmed delivery clears the marker.
		if h.Live() && h.Deferred && h.Confirmed() {
			e.emit(pos, HandoffStaleDeferredEvidence{ID: h.ID, Tokens: h.Tokens, Delivery: h.Delivery})
		}
		// Rule 7: deferred, and the thread has no turn after its target turn.
		if h.Live() && h.Deferred && !h.Confirmed() && target != nil && !e.turnAfter(target.Pos.Line) {
			e.emit(pos, HandoffAbandonedEvidence{ID: h.ID, Tokens: h.Tokens,
				TurnID: target.ID, TurnLine: target.Pos.Line, ProviderThreadID: e.providerThread(h)})
		}
		if h.Status == "ready" && h.Deferred && !h.Confirmed() {
			waiting = append(waiting, h)
		}
	}
	older := e.duplicateHandoffs(waiting)
	for _, o := range oversized {
		o.ev.DuplicateOf = older[o.ev.ID]
		e.emit(o.pos, o.ev)
	}
}

// sigStatus is the delivery status of a delivery signature.
func sigStatus(sig string) string {
	s, _, _ := strings.Cut(sig, "\x00")
	return s
}

func (e *engine) providerThread(h *Handoff) string {
	if h.ToProviderThreadID != "" {
		return h.ToProviderThreadID
	}
	return e.st.ThreadID
}

// turnAfter reports whether a turn starts after a line.
func (e *engine) turnAfter(line int) bool {
	return len(e.turns) > 0 && e.turns[len(e.turns)-1].Pos.Line > line
}

// maxListed caps the ids a finding lists; the counts give the rest.
const maxListed = 5

func (e *engine) checkHandoffItems(h *Handoff, pos Pos) {
	var overlap, unknown []string
	nOverlap, nUnknown := 0, 0
	if len(h.ItemIDs) > 0 && len(h.OmittedItemIDs) > 0 {
		omitted := make(map[string]bool, len(h.OmittedItemIDs))
		for _, id := range h.OmittedItemIDs {
			omitted[id] = true
		}
		done := map[string]bool{}
		for _, id := range h.ItemIDs {
			if omitted[id] && !done[id] {
				done[id] = true
				nOverlap++
				if len(overlap) < maxListed {
					overlap = append(overlap, id)
				}
			}
		}
	}
	done := map[string]bool{}
	for _, list := range [][]string{h.ItemIDs, h.OmittedItemIDs} {
		for _, id := range list {
			if done[id] || e.knownID(id) {
				continue
			}
			done[id] = true
			nUnknown++
			if len(unknown) < maxListed {
				unknown = append(unknown, id)
			}
		}
	}
	if nOverlap == 0 && nUnknown == 0 {
		return
	}
	e.emit(pos, HandoffBadItemsEvidence{ID: h.ID, Overlap: nonNil(overlap), OverlapCount: nOverlap,
		Unknown: nonNil(unknown), UnknownCount: nUnknown})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// duplicateHandoffs applies rule 4: deferred ready handoffs for this thread
// covering the same items are duplicates; the oldest (first record) is
// kept. Handoffs not yet deferred take part in the grouping but are not
// reported here: it returns, for each of them that is not the oldest, the
// id of the copy that is kept.
func (e *engine) duplicateHandoffs(waiting []*Handoff) map[string]string {
	older := map[string]string{}
	if len(waiting) < 2 {
		return older
	}
	byItems := map[string][]*Handoff{}
	var keys []string
	for _, h := range waiting {
		items := slices.Clone(h.ItemIDs)
		slices.Sort(items)
		items = slices.Compact(items)
		k := strings.Join(items, "\x00")
		if _, ok := byItems[k]; !ok {
			keys = append(keys, k)
		}
		byItems[k] = append(byItems[k], h)
	}
	for _, k := range keys {
		group := byItems[k]
		if len(group) < 2 {
			continue
		}
		sort.SliceStable(group, func(i, j int) bool {
			if group[i].FirstLine != group[j].FirstLine {
				return group[i].FirstLine < group[j].FirstLine
			}
			return group[i].seq < group[j].seq
		})
		kept := group[0]
		n := 0
		if k != "" {
			n = strings.Count(k, "\x00") + 1
		}
		for _, h := range group[1:] {
			if !h.Deferred {
				older[h.ID] = kept.ID
				continue
			}
			e.emit(Pos{Line: h.Line, Offset: h.Offset, Ordinal: h.Ordinal, Segment: h.Segment},
				HandoffDuplicateDeferredEvidence{ID: h.ID, KeptID: kept.ID, KeptLine: kept.FirstLine, Items: n,
					ProviderThreadID: e.providerThread(h)})
		}
	}
	return older
}
