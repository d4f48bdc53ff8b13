package reconstruct_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/checks"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// The numbers in these tests are worked out by hand from handoffs.md.

func TestHandoffBudget(t *testing.T) {
	tests := []struct {
		name            string
		w, f, p, cap    int64
		reserve, budget int64
	}{
		// 1,000,000-token thread at 840,960 used: ~159k free, budget 0.
		{"million", 1000000, 840960, 33, 16000, 250000, 0},
		{"near-full 44k", 44000, 41800, 25, 16000, 16000, 0},
		{"room capped", 258400, 170000, 0, 16000, 64600, 16000},
		{"room under a larger cap", 258400, 170000, 0, 64000, 64600, 23800},
		{"ceiling", 1000000, 0, 0, 100000, 250000, 64000},
		{"reserve rounds up", 258401, 170000, 0, 64000, 64601, 23800},
		{"small window: minimum reserve", 60000, 10000, 100, 16000, 16000, 16000},
		{"small window, little room", 60000, 30000, 100, 16000, 16000, 13900},
		{"no window", 0, 0, 0, 16000, 16000, 0},
		{"fill over window", 100000, 120000, 0, 16000, 25000, 0},
	}
	for _, tt := range tests {
		if got := reconstruct.HandoffReserve(tt.w); got != tt.reserve {
			t.Errorf("%s: reserve(%d) = %d, want %d", tt.name, tt.w, got, tt.reserve)
		}
		if got := reconstruct.HandoffBudget(tt.w, tt.f, tt.p, tt.cap); got != tt.budget {
			t.Errorf("%s: budget(%d, %d, %d, cap %d) = %d, want %d", tt.name, tt.w, tt.f, tt.p, tt.cap, got, tt.budget)
		}
	}
}

// --- a tiny rollout builder ---

const thread = "019d3c10-0a00-7c1e-9d2a-4b5c6d7e8f90"

type rb struct {
	lines []string
	total int64
}

func newRB() *rb {
	b := &rb{}
	b.add("session_meta", `{"id":"`+thread+`","cli_version":"0.128.0","source":"cli"}`)
	return b
}

func (b *rb) add(typ, payload string) int {
	b.lines = append(b.lines, fmt.Sprintf(`{"timestamp":"2026-04-02T10:00:%02d.000Z","type":%q,"payload":%s}`, len(b.lines)%60, typ, payload))
	return len(b.lines)
}

func turnID(n int) string { return fmt.Sprintf("019d3c10-2000-7%03x-8%03x-%012x", n, n, n) }
func msgID(n int) string  { return fmt.Sprintf("msg_019d3c10-1000-7%03x-8%03x-%012x", n, n, n) }
func hofID(n int) string  { return fmt.Sprintf("hof_019d3c10-3000-7%03x-8%03x-%012x", n, n, n) }

func (b *rb) start(n int, window int64) int {
	return b.add("event_msg", fmt.Sprintf(`{"type":"task_started","turn_id":%q,"model_context_window":%d}`, turnID(n), window))
}
func (b *rb) user(m int, text string) int {
	return b.add("response_item", fmt.Sprintf(`{"type":"message","id":%q,"role":"user","content":[{"type":"input_text","text":%q}]}`, msgID(m), text))
}
func (b *rb) tokens(fill, window int64) int {
	b.total += fill
	return b.add("event_msg", fmt.Sprintf(`{"type":"token_count","info":{"total_token_usage":{"total_tokens":%d},"last_token_usage":{"total_tokens":%d},"model_context_window":%d}}`, b.total, fill, window))
}
func (b *rb) complete(n int) int {
	return b.add("event_msg", fmt.Sprintf(`{"type":"task_complete","turn_id":%q}`, turnID(n)))
}
func (b *rb) aborted(n int) int {
	return b.add("event_msg", fmt.Sprintf(`{"type":"turn_aborted","turn_id":%q}`, turnID(n)))
}

// handoff writes a record; extra is raw JSON members appended to the payload.
func (b *rb) handoff(h, target int, tokens int64, items []int, extra string) int {
	ids := make([]string, len(items))
	for i, m := range items {
		ids[i] = fmt.Sprintf("%q", msgID(m))
	}
	p := fmt.Sprintf(`{"id":%q,"status":"ready","target_turn_id":%q,"history":{"item_ids":[%s],"omitted_item_ids":[],"tokens":%d}%s}`,
		hofID(h), turnID(target), strings.Join(ids, ","), tokens, extra)
	return b.add("context_handoff", p)
}

func (b *rb) String() string { return strings.Join(b.lines, "\n") + "\n" }

// replay runs the engine and returns the handoff observations and the state.
func replay(t *testing.T, src string, opts reconstruct.Options) ([]reconstruct.Observation, *reconstruct.State) {
	t.Helper()
	var obs []reconstruct.Observation
	st, err := reconstruct.Replay(strings.NewReader(src), reconstruct.ReplayOptions{Options: opts}, func(o reconstruct.Observation) {
		if k := o.Kind(); k >= reconstruct.HandoffOversized && k <= reconstruct.HandoffAbandoned {
			obs = append(obs, o)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return obs, st
}

// got reduces observations to "line kind-name" strings.
func got(obs []reconstruct.Observation) []string {
	names := map[reconstruct.Kind]string{
		reconstruct.HandoffOversized: "oversized", reconstruct.HandoffLostDeferred: "lost-deferred",
		reconstruct.HandoffStaleDeferred: "stale-deferred", reconstruct.HandoffDuplicateDeferred: "duplicate-deferred",
		reconstruct.HandoffDoubleDelivery: "double-delivery", reconstruct.HandoffBadItems: "bad-items",
		reconstruct.HandoffAbandoned: "abandoned",
	}
	out := []string{}
	for _, o := range obs {
		out = append(out, fmt.Sprintf("%d %s", o.Pos.Line, names[o.Kind()]))
	}
	return out
}

func TestHandoffLatestRecordWins(t *testing.T) {
	b := newRB()
	b.start(1, 258400)
	b.user(1, "hello")
	b.tokens(20000, 258400)
	b.complete(1)
	first := b.add("context_handoff", `{"id":"`+hofID(1)+`","status":"pending","target_turn_id":"`+turnID(2)+`","to_provider_thread_id":"`+thread+`","from_provider_thread_ids":["p1","p2"],"history":{"item_ids":[],"tokens":0}}`)
	other := b.handoff(2, 2, 100, []int{1}, "")
	b.handoff(1, 2, 9000, []int{1}, `,"deferred":true`)
	last := b.handoff(1, 2, 9000, []int{1}, `,"delivery":{"status":"injected","native_thread_id":"n1","turn_id":"`+turnID(2)+`"}`)
	obs, st := replay(t, b.String(), reconstruct.Options{})
	if len(obs) != 0 {
		t.Errorf("observations %v, want none", got(obs))
	}
	h := st.Handoffs[hofID(1)]
	if h == nil {
		t.Fatalf("handoff %s not tracked; have %v", hofID(1), st.HandoffIDs())
	}
	want := reconstruct.Handoff{ID: hofID(1), Line: last, FirstLine: first, Records: 3, Status: "ready",
		TargetTurnID: turnID(2), ItemIDs: []string{msgID(1)}, OmittedItemIDs: []string{}, Tokens: 9000,
		Delivery: "injected", DeliveryThreadID: "n1", DeliveryTurnID: turnID(2),
		WasDeferred: true, DeferredLine: last - 1, Deliveries: 1, ForThisThread: true}
	gotH := *h
	gotH.Offset, gotH.Ordinal, gotH.Raw, gotH.Budget = 0, nil, "", nil
	if gotH.OmittedItemIDs == nil {
		gotH.OmittedItemIDs = []string{}
	}
	if diff := cmp.Diff(want, gotH, cmpopts.IgnoreUnexported(reconstruct.Handoff{})); diff != "" {
		t.Errorf("latest state (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(h.Raw, `{"id":"`+hofID(1)+`"`) || !strings.Contains(h.Raw, `"injected"`) {
		t.Errorf("Raw is not the latest payload: %s", h.Raw)
	}
	if ids := st.HandoffIDs(); !cmp.Equal(ids, []string{hofID(2), hofID(1)}) {
		t.Errorf("HandoffIDs = %v, want [%s %s] (by latest record: lines %d, %d)", ids, hofID(2), hofID(1), other, last)
	}
}

func TestHandoffOversizedFacts(t *testing.T) {
	t.Run("million-token thread", func(t *testing.T) {
		b := newRB()
		b.start(1, 1000000)
		b.user(1, "Port the invoice module.")
		b.tokens(840960, 1000000)
		b.complete(1)
		line := b.handoff(1, 2, 20000, []int{1}, "")
		b.start(2, 1000000)
		b.user(2, "Continue with the billing port.") // 33 tokens
		b.tokens(846200, 1000000)                    // after the turn start: not used
		b.complete(2)
		obs, st := replay(t, b.String(), reconstruct.Options{})
		if diff := cmp.Diff([]string{fmt.Sprintf("%d oversized", line)}, got(obs)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		want := reconstruct.HandoffOversizedEvidence{ID: hofID(1), Tokens: 20000, Budget: 0, Window: 1000000,
			Fill: 840960, Prompt: 33, Reserve: 250000, Cap: 16000, TurnID: turnID(2), AtEOF: false}
		if diff := cmp.Diff(want, obs[0].Evidence); diff != "" {
			t.Errorf("facts (-want +got):\n%s", diff)
		}
		bu := st.Handoffs[hofID(1)].Budget
		if bu == nil || bu.TurnLine != line+1 || bu.Window-bu.Fill != 159040 {
			t.Errorf("Budget = %+v, want turn line %d and 159040 free", bu, line+1)
		}
	})
	t.Run("no token_count yet: window of task_started, fill 0", func(t *testing.T) {
		b := newRB()
		line := b.handoff(1, 1, 17000, nil, "")
		b.start(1, 40000)
		b.add("event_msg", `{"type":"user_message","message":"go"}`) // 4 tokens
		b.complete(1)
		b.start(2, 40000)
		obs, _ := replay(t, b.String(), reconstruct.Options{})
		if diff := cmp.Diff([]string{fmt.Sprintf("%d oversized", line)}, got(obs)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		f := obs[0].Evidence.(reconstruct.HandoffOversizedEvidence)
		// 40000 - 0 - 4 - 16000 = 23996, capped at 16000.
		if f.Window != 40000 || f.Fill != 0 || f.Prompt != 4 || f.Budget != 16000 {
			t.Errorf("facts %v", f)
		}
	})
	t.Run("target turn not in the rollout: end of file, prompt 0", func(t *testing.T) {
		for _, tc := range []struct {
			tokens int64
			cap    int64
			want   bool
		}{{16001, 0, true}, {16000, 0, false}, {23800, 64000, false}, {23801, 64000, true}} {
			b := newRB()
			b.start(1, 258400)
			b.user(1, "Port the invoice module.")
			b.tokens(170000, 258400)
			b.complete(1)
			line := b.handoff(1, 9, tc.tokens, []int{1}, "")
			obs, _ := replay(t, b.String(), reconstruct.Options{HandoffCap: tc.cap})
			if (len(obs) == 1) != tc.want {
				t.Errorf("tokens %d cap %d: observations %v, want a finding: %v", tc.tokens, tc.cap, got(obs), tc.want)
				continue
			}
			if tc.want {
				f := obs[0].Evidence.(reconstruct.HandoffOversizedEvidence)
				if obs[0].Pos.Line != line || !f.AtEOF || f.Prompt != 0 || f.Reserve != 64600 {
					t.Errorf("tokens %d cap %d: at line %d, facts %v", tc.tokens, tc.cap, obs[0].Pos.Line, f)
				}
			}
		}
	})
	t.Run("unknown window: not judged", func(t *testing.T) {
		b := newRB()
		b.add("event_msg", `{"type":"task_started","turn_id":"`+turnID(1)+`"}`)
		b.handoff(1, 1, 50000, nil, "")
		b.complete(1)
		b.add("event_msg", `{"type":"task_started","turn_id":"`+turnID(2)+`"}`)
		if obs, _ := replay(t, b.String(), reconstruct.Options{}); len(obs) != 0 {
			t.Errorf("observations %v, want none", got(obs))
		}
	})
	t.Run("turn id known only from turn_context", func(t *testing.T) {
		b := newRB()
		b.tokens(240000, 258400)
		line := b.handoff(1, 1, 5000, nil, "")
		b.add("event_msg", `{"type":"task_started","model_context_window":258400}`)
		b.add("turn_context", `{"turn_id":"`+turnID(1)+`"}`)
		b.complete(1)
		b.start(2, 258400)
		obs, _ := replay(t, b.String(), reconstruct.Options{})
		if diff := cmp.Diff([]string{fmt.Sprintf("%d oversized", line)}, got(obs)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		if obs[0].Evidence.(reconstruct.HandoffOversizedEvidence).AtEOF {
			t.Errorf("judged at the end of the file, not at the turn: %v", obs[0].Evidence)
		}
	})
	t.Run("rolled-back fill does not count", func(t *testing.T) {
		// Turn 2 fills the context to 200,000, then is rolled back: resume
		// restores the fill of turn 1 (10,000), so turn 3 has room.
		b := newRB()
		b.start(1, 258400)
		b.user(1, "one")
		b.tokens(10000, 258400)
		b.complete(1)
		b.start(2, 258400)
		b.user(2, "two")
		b.tokens(200000, 258400)
		b.complete(2)
		b.add("event_msg", `{"type":"thread_rolled_back","num_turns":1}`)
		b.handoff(1, 3, 15000, []int{1}, "")
		b.start(3, 258400)
		b.user(3, "three")
		b.tokens(230000, 258400) // after the turn start: not used
		b.complete(3)
		b.start(4, 258400)
		obs, st := replay(t, b.String(), reconstruct.Options{})
		if len(obs) != 0 {
			t.Errorf("observations %v, want none", got(obs))
		}
		if bu := st.Handoffs[hofID(1)].Budget; bu == nil || bu.Fill != 10000 || bu.Budget != 16000 {
			t.Errorf("Budget = %+v, want fill 10000, budget 16000", bu)
		}
	})
	t.Run("deferred, delivered, failed or another thread's: not judged", func(t *testing.T) {
		for _, extra := range []string{`,"deferred":true`, `,"delivery":{"status":"pending"}`,
			`,"to_provider_thread_id":"019d3c0f-77aa-7b10-8c44-0e1f2a3b4c5d"`} {
			b := newRB()
			b.start(1, 1000000)
			b.tokens(990000, 1000000)
			b.complete(1)
			b.handoff(1, 2, 20000, nil, extra)
			b.start(2, 1000000)
			b.complete(2)
			b.start(3, 1000000)
			if obs, _ := replay(t, b.String(), reconstruct.Options{}); len(obs) != 0 {
				t.Errorf("%s: observations %v, want none", extra, got(obs))
			}
		}
	})
}

func TestHandoffLifecycle(t *testing.T) {
	// deliv is a delivery member.
	deliv := func(status string, turn int) string {
		return fmt.Sprintf(`,"delivery":{"status":%q,"native_thread_id":"n","turn_id":%q}`, status, turnID(turn))
	}
	// base: turn 1 fills the window; the handoff is deferred for turn 2.
	base := func() *rb {
		b := newRB()
		b.start(1, 128000)
		b.user(1, "one")
		b.tokens(110000, 128000)
		b.complete(1)
		b.handoff(1, 2, 12000, []int{1}, `,"deferred":true`)
		b.start(2, 128000)
		b.user(2, "two")
		return b
	}
	tests := []struct {
		name string
		add  func(b *rb) []string // appends lines, returns the expected observations
	}{
		{"lost marker, delivery turn ended", func(b *rb) []string {
			l := b.handoff(1, 2, 12000, []int{1}, `,"delivery":{"status":"pending","turn_id":"`+turnID(2)+`"}`)
			b.aborted(2)
			return []string{fmt.Sprintf("%d lost-deferred", l)}
		}},
		{"lost marker, no delivery turn: the target turn ended", func(b *rb) []string {
			l := b.handoff(1, 2, 12000, []int{1}, `,"delivery":{"status":"pending"}`)
			b.complete(2)
			b.start(3, 128000)
			return []string{fmt.Sprintf("%d lost-deferred", l)}
		}},
		{"lost marker while the delivery turn is open: in progress", func(b *rb) []string {
			b.complete(2)
			b.start(3, 128000)
			b.handoff(1, 2, 12000, []int{1}, `,"delivery":{"status":"pending","turn_id":"`+turnID(3)+`"}`)
			return nil
		}},
		{"pending delivery keeps the marker", func(b *rb) []string {
			b.handoff(1, 2, 12000, []int{1}, `,"deferred":true,"delivery":{"status":"pending"}`)
			b.aborted(2)
			b.start(3, 128000)
			return nil
		}},
		{"never deferred: nothing lost", func(b *rb) []string {
			b.handoff(2, 2, 100, []int{1}, `,"delivery":{"status":"pending"}`)
			b.complete(2)
			b.start(3, 128000)
			return nil
		}},
		{"stale marker after confirmed delivery", func(b *rb) []string {
			l := b.handoff(1, 2, 12000, []int{1}, `,"deferred":true`+deliv("inline", 2))
			b.complete(2)
			return []string{fmt.Sprintf("%d stale-deferred", l)}
		}},
		{"stale marker on a superseded handoff: harmless", func(b *rb) []string {
			b.add("context_handoff", `{"id":"`+hofID(1)+`","status":"superseded","deferred":true,"target_turn_id":"`+turnID(2)+`","history":{"item_ids":[],"tokens":1}`+deliv("inline", 2)+`}`)
			b.complete(2)
			return nil
		}},
		{"second delivery after a pending record", func(b *rb) []string {
			b.handoff(1, 2, 12000, []int{1}, deliv("injected", 2))
			b.handoff(1, 2, 12000, []int{1}, `,"delivery":{"status":"pending"}`)
			l := b.handoff(1, 2, 12000, []int{1}, deliv("injected", 2))
			b.handoff(1, 2, 12000, []int{1}, deliv("inline", 2)) // a third: reported once
			b.complete(2)
			return []string{fmt.Sprintf("%d double-delivery", l)}
		}},
		{"the same delivery written twice", func(b *rb) []string {
			b.handoff(1, 2, 12000, []int{1}, deliv("injected", 2))
			b.handoff(1, 2, 12000, []int{1}, deliv("injected", 2))
			b.complete(2)
			return nil
		}},
		{"double delivery to another provider thread", func(b *rb) []string {
			to := `,"to_provider_thread_id":"019d3c0f-77aa-7b10-8c44-0e1f2a3b4c5d"`
			b.handoff(3, 2, 100, []int{1}, to+deliv("injected", 2))
			l := b.handoff(3, 2, 100, []int{1}, to+deliv("injected", 3))
			b.complete(2)
			b.start(3, 128000)
			return []string{fmt.Sprintf("%d double-delivery", l)}
		}},
		{"abandoned: no turn after the target turn", func(b *rb) []string {
			b.complete(2)
			return []string{"6 abandoned"}
		}},
		{"a retry turn: not abandoned", func(b *rb) []string {
			b.complete(2)
			b.start(3, 128000)
			return nil
		}},
		{"duplicates: the later handoff, once", func(b *rb) []string {
			b.complete(2)
			b.start(3, 128000)
			l := b.handoff(2, 3, 12000, []int{1, 1}, `,"deferred":true`) // the same item set
			b.handoff(3, 3, 12000, []int{1, 2}, `,"deferred":true`)      // other items
			b.user(3, "three")
			b.complete(3)
			b.start(4, 128000)
			return []string{fmt.Sprintf("%d duplicate-deferred", l)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base()
			want := tt.add(b)
			if want == nil {
				want = []string{}
			}
			obs, _ := replay(t, b.String(), reconstruct.Options{})
			if diff := cmp.Diff(want, got(obs)); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, b)
			}
		})
	}
}

func TestHandoffBadItems(t *testing.T) {
	b := newRB()
	b.start(1, 258400)
	b.user(1, "one")
	b.user(2, "two")
	b.complete(1)
	b.start(2, 258400)
	b.user(3, "three")
	b.add("event_msg", `{"type":"thread_rolled_back","num_turns":1}`) // item 3 leaves the live history
	b.add("compacted", `{"message":"s","replacement_history":[{"type":"message","id":"`+msgID(9)+`","role":"user","content":[]}]}`)
	ok := b.add("context_handoff", `{"id":"`+hofID(1)+`","status":"ready","history":{"item_ids":["`+msgID(1)+`","`+msgID(3)+`"],"omitted_item_ids":["`+msgID(9)+`"],"tokens":1}}`)
	bad := b.add("context_handoff", `{"id":"`+hofID(2)+`","status":"ready","history":{"item_ids":["`+msgID(1)+`","`+msgID(2)+`","x1","x2","x3","x4","x5","x6","x1"],"omitted_item_ids":["`+msgID(2)+`","`+msgID(1)+`"],"tokens":1}}`)
	obs, _ := replay(t, b.String(), reconstruct.Options{})
	if diff := cmp.Diff([]string{fmt.Sprintf("%d bad-items", bad)}, got(obs)); diff != "" {
		t.Fatalf("(line %d is fine) (-want +got):\n%s", ok, diff)
	}
	want := reconstruct.HandoffBadItemsEvidence{ID: hofID(2), Overlap: []string{msgID(1), msgID(2)}, OverlapCount: 2,
		Unknown: []string{"x1", "x2", "x3", "x4", "x5"}, UnknownCount: 6}
	if diff := cmp.Diff(want, obs[0].Evidence); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}

func TestHandoffConcatenatedLine(t *testing.T) {
	b := newRB()
	b.start(1, 1000000)
	b.tokens(990000, 1000000)
	b.complete(1)
	// Two records of one handoff on one physical line: the second wins.
	h1 := `{"timestamp":"2026-04-02T10:00:09.000Z","type":"context_handoff","payload":{"id":"` + hofID(1) + `","status":"ready","deferred":true,"target_turn_id":"` + turnID(2) + `","history":{"tokens":20000}}}`
	h2 := strings.Replace(h1, `"deferred":true,`, ``, 1)
	b.lines = append(b.lines, h1+h2)
	line := len(b.lines)
	b.start(2, 1000000)
	b.complete(2)
	b.start(3, 1000000)
	src := b.String()
	obs, _ := replay(t, src, reconstruct.Options{})
	if diff := cmp.Diff([]string{fmt.Sprintf("%d oversized", line)}, got(obs)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if off := int64(strings.Index(src, h1)); obs[0].Pos.Offset != off {
		t.Errorf("offset %d, want the line start %d", obs[0].Pos.Offset, off)
	}
}

func TestHandoffMalformedRecords(t *testing.T) {
	b := newRB()
	for _, p := range []string{`{}`, `{"id":7}`, `{"id":""}`, `[]`, `"x"`, `{"id":"hof_x","status":3,"history":"no","deferred":"yes","delivery":[]}`,
		`{"id":"hof_y","status":"ready","history":{"item_ids":"no","tokens":"many"},"delivery":{}}`} {
		b.add("context_handoff", p)
	}
	_, st := replay(t, b.String(), reconstruct.Options{})
	if ids := st.HandoffIDs(); !cmp.Equal(ids, []string{"hof_x", "hof_y"}) {
		t.Errorf("HandoffIDs = %v, want [hof_x hof_y]", ids)
	}
	if h := st.Handoffs["hof_x"]; h.Deferred || h.Status != "" || h.Delivery != "" {
		t.Errorf("hof_x = %+v: non-boolean deferred, non-string status and a non-object delivery read as absent", h)
	}
	if h := st.Handoffs["hof_y"]; h.Delivery != "unknown" {
		t.Errorf("hof_y delivery = %q, want a delivery without status to count as one (unknown)", h.Delivery)
	}
}

// FuzzHandoffs mutates the handoff fixtures: whatever the records hold, the
// engine and the handoff fix planner report or refuse, never panic.
func FuzzHandoffs(f *testing.F) {
	paths, err := filepath.Glob("../fixtures/handoffs/*.txtar")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no handoff fixtures: %v", err)
	}
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if strings.HasSuffix(file.Name, ".jsonl") {
				f.Add(file.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := checks.RunReader("f.jsonl", bytes.NewReader(data), checks.Options{HandoffCap: int64(len(data) % 70000)})
		if err != nil {
			t.Fatalf("RunReader: %v", err)
		}
		fp, err := checks.PlanFixes(res, nil, checks.FixOptions{Fix: handoffFixes(t)})
		if err != nil {
			t.Fatal(err)
		}
		// Edits that cannot apply are skipped, never a panic.
		if _, err := rollout.Rewrite(io.Discard, bytes.NewReader(data), &fp.Plan, rollout.RewriteOptions{}); err != nil {
			t.Fatalf("Rewrite: %v", err)
		}
	})
}

func handoffFixes(t *testing.T) checks.FixSet {
	t.Helper()
	fs, err := checks.SelectFixes([]string{"handoff/"})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
