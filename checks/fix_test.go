package checks

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// TestFixesDocumented: a rule has a fix planner exactly when its Fix says
// what repair does, so verify's "fixable", the docs and what repair does
// cannot drift.
func TestFixesDocumented(t *testing.T) {
	for _, r := range Rules() {
		if (r.Fix != "") != (r.plan != nil) {
			t.Errorf("%s: Fix %q, planner %v", r.ID, r.Fix, r.plan != nil)
		}
		if r.OptIn && r.plan == nil {
			t.Errorf("%s: opt-in without a fix", r.ID)
		}
	}
}

func TestSelectFixes(t *testing.T) {
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	def, err := SelectFixes(nil)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := SelectFixes([]string{"all"})
	for _, r := range Rules() {
		if !r.Fixable() {
			continue
		}
		if def[r.ID] == r.OptIn {
			t.Errorf("%s: in the default set = %v, opt-in = %v", r.ID, def[r.ID], r.OptIn)
		}
		if !all[r.ID] {
			t.Errorf("%s: not in all", r.ID)
		}
	}
	for _, id := range []string{"line/torn-tail", "line/invalid-json", "line/concatenated", "meta/not-first", "ordinal/gap",
		"item/missing-id", "agentcomm/missing-id", "item/id-prefix-mismatch", "item/duplicate-id"} {
		if !def[id] {
			t.Errorf("%s is not a default fix", id)
		}
	}
	for _, id := range []string{"tool/orphan-call", "tool/orphan-output", "worldstate/empty-patch", "line/crlf"} {
		if def[id] {
			t.Errorf("%s is a default fix, want opt-in", id)
		}
	}
	got, err := SelectFixes([]string{"ordinal/", "tool/orphan-call"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ordinal/duplicate", "ordinal/foreign-records", "ordinal/gap", "ordinal/last-missing", "ordinal/missing", "ordinal/non-monotonic", "tool/orphan-call"}
	if diff := cmp.Diff(want, keys(got)); diff != "" {
		t.Errorf("ordinal/,tool/orphan-call (-want +got):\n%s", diff)
	}
	if got, _ := SelectFixes([]string{"ordinal"}); len(got) != 6 {
		t.Errorf("area without slash: %v", keys(got))
	}
	for _, bad := range []string{"nope", "tool/duplicate-call-id", "turn/"} {
		if _, err := SelectFixes([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

const meta = `{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90"}}`
const item = `{"timestamp":"2026-03-10T09:35:30.111Z","type":"response_item","payload":{"type":"message","id":"msg_019cd6f2-b50b-700b-800b-00000000000b","role":"user","content":"hi"}}`

func plan(t *testing.T, in string, fix ...string) *FixPlan {
	t.Helper()
	var facts FixFacts
	res, err := RunReader("r.jsonl", strings.NewReader(in), Options{}, facts.Observe)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := PlanFixes(res, &facts, FixOptions{Fix: mustSelect(t, fix...)})
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func kinds(p rollout.Plan) map[int][]rollout.EditKind {
	m := map[int][]rollout.EditKind{}
	for l, es := range p.Lines {
		for _, e := range es {
			m[l] = append(m[l], e.Kind)
		}
	}
	return m
}

func TestPlanFixes(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		if fp := plan(t, meta+"\n"+item+"\n"); !fp.Plan.Empty() || len(fp.Planned) != 0 {
			t.Errorf("a clean file has a plan: %+v", fp)
		}
	})
	t.Run("opt-in left", func(t *testing.T) {
		out := `{"timestamp":"2026-03-10T09:35:30.222Z","type":"response_item","payload":{"type":"function_call_output","id":"fco_019cd6f2-b50d-700d-800d-00000000000d","call_id":"x","output":""}}`
		fp := plan(t, meta+"\n"+item+"\n"+out+"\n")
		if !fp.Plan.Empty() || len(fp.Left) != 1 || fp.Left[0].Rule != "tool/orphan-output" || !strings.Contains(fp.Left[0].Reason, "--fix tool/orphan-output") {
			t.Errorf("plan %+v, left %+v", fp.Plan, fp.Left)
		}
		fp = plan(t, meta+"\n"+item+"\n"+out+"\n", "tool/orphan-output")
		if diff := cmp.Diff(map[int][]rollout.EditKind{3: {rollout.EditDrop}}, kinds(fp.Plan)); diff != "" {
			t.Errorf("edits (-want +got):\n%s", diff)
		}
	})
	t.Run("structural edits renumber a paginated file", func(t *testing.T) {
		pm := strings.Replace(meta, `"payload":{`, `"ordinal":0,"payload":{"history_mode":"paginated",`, 1)
		it := strings.Replace(item, `"type":"response_item"`, `"ordinal":1,"type":"response_item"`, 1)
		fp := plan(t, pm+"\ngarbage\n"+it+"\n")
		if fp.Plan.Sequence == nil || fp.Plan.Sequence.Key != "ordinal" || fp.Plan.Sequence.After != "timestamp" {
			t.Errorf("no renumbering planned: %+v", fp.Plan.Sequence)
		}
		// The same in a legacy file: no ordinals to keep in step.
		if fp := plan(t, meta+"\ngarbage\n"+item+"\n"); fp.Plan.Sequence != nil {
			t.Errorf("renumbering planned in a legacy file")
		}
	})
	t.Run("one edit for several findings", func(t *testing.T) {
		a := strings.Replace(item, `"id":"msg_019cd6f2-b50b-700b-800b-00000000000b",`, "", 1)
		fp := plan(t, meta+"\n"+item+"\n"+a+a+"\n")
		got := kinds(fp.Plan)[3]
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if diff := cmp.Diff([]rollout.EditKind{rollout.EditSet, rollout.EditSplit}, got); diff != "" {
			t.Errorf("line 3 edits (-want +got):\n%s", diff)
		}
		if len(fp.Planned) != 3 { // the split and two missing ids
			t.Errorf("planned %d findings, want 3", len(fp.Planned))
		}
	})
}

func TestIDSource(t *testing.T) {
	st := &reconstruct.State{ThreadID: "019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90"}
	s := newIDSource(st, FixOptions{})
	want := "msg_" + rollout.DerivedUUIDv7(1000, st.ThreadID, 3, -1)
	if got := s.id("msg", 1000, 3, -1); got != want {
		t.Errorf("id = %s, want %s", got, want)
	}
	if got := s.id("msg", 1000, 3, -1); got != want {
		t.Errorf("the same (line, index) gave another id: %s", got)
	}
	// An id already in the file is never given again.
	live := "fco_" + rollout.DerivedUUIDv7(1000, st.ThreadID, 4, -1)
	st.History = reconstruct.NewHistory(reconstruct.Item{ID: live})
	s = newIDSource(st, FixOptions{})
	got := s.id("fco", 1000, 4, -1)
	if got == live {
		t.Errorf("collision with a live id: %s", got)
	}
	if _, err := rollout.ParseUUIDv7(strings.TrimPrefix(got, "fco_")); err != nil {
		t.Errorf("salted id is not a UUIDv7: %v", err)
	}
	// A second rewrite of the plan (--diff) gets the salted id again.
	if again := s.id("fco", 1000, 4, -1); again != got {
		t.Errorf("the salted id changed between two rewrites: %s, then %s", got, again)
	}
	// Random ids: random bits, remembered for the same (line, index).
	r := newIDSource(st, FixOptions{RandomIDs: true, Random: bytes.NewReader(bytes.Repeat([]byte{0xab}, 40))})
	a, b := r.id("msg", 1000, 3, -1), r.id("msg", 1000, 3, -1)
	if a != b || a == want || !strings.HasPrefix(a, "msg_00000000-03e8-7") {
		t.Errorf("random ids %s, %s", a, b)
	}
}

func TestLineMillis(t *testing.T) {
	for in, want := range map[string]int64{
		`{"timestamp":"1970-01-01T00:00:01.500Z"}`:      1500,
		`{"timestamp":"1970-01-01T01:00:01.500+01:00"}`: 1500,
		`{"timestamp":"yesterday"}`:                     0,
		`{"type":"message"}`:                            0,
	} {
		if got := lineMillis([]byte(in)); got != want {
			t.Errorf("%s: %d, want %d", in, got, want)
		}
	}
}

// TestOrphanCallLiveness: the opt-in fix closes an unanswered call of the
// open last turn only once the session is over (the file was last written
// an hour or more before Now).
func TestOrphanCallLiveness(t *testing.T) {
	start := `{"timestamp":"2026-03-10T09:35:30.074Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}`
	call := `{"timestamp":"2026-03-10T09:35:30.185Z","type":"response_item","payload":{"type":"function_call","id":"fc_019cd6f2-b50c-700c-800c-00000000000c","name":"shell_command","arguments":"{}","call_id":"call_1A"}}`
	in := meta + "\n" + start + "\n" + item + "\n" + call + "\n"
	last := time.Date(2026, 3, 10, 9, 35, 30, 185e6, time.UTC)
	for _, tc := range []struct {
		now     time.Time
		planned bool
	}{
		{time.Time{}, false},               // unknown: may be running
		{last.Add(5 * time.Minute), false}, // written 5 min ago: may be running
		{last.Add(3 * time.Hour), true},    // stopped 3 h ago
	} {
		var facts FixFacts
		res, err := RunReader("r.jsonl", strings.NewReader(in), Options{Now: tc.now}, facts.Observe)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := PlanFixes(res, &facts, FixOptions{Fix: mustSelect(t, "tool/orphan-call")})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int][]rollout.EditKind{}
		if tc.planned {
			want[4] = []rollout.EditKind{rollout.EditInsertAfter}
		} else if len(fp.Left) != 1 || !strings.Contains(fp.Left[0].Reason, "may still be running") {
			t.Errorf("now %v: left %+v, want the call left as possibly running", tc.now, fp.Left)
		}
		if diff := cmp.Diff(want, kinds(fp.Plan), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("now %v: edits (-want +got):\n%s", tc.now, diff)
		}
	}
}

// TestFailClosedRepair: in a file whose history mode is unknown even a
// line-level fix is left, with the reason.
func TestFailClosedRepair(t *testing.T) {
	m := strings.Replace(meta, `"payload":{`, `"payload":{"history_mode":"paginated_refs_v1",`, 1)
	fp := plan(t, m+"\ngarbage\n"+item+"\n", "all")
	if !fp.Plan.Empty() || len(fp.Planned) != 0 {
		t.Errorf("a plan for a file that was not replayed: %+v", fp.Plan)
	}
	if len(fp.Left) != 1 || fp.Left[0].Rule != "line/invalid-json" || !strings.Contains(fp.Left[0].Reason, "paginated_refs_v1 is unknown") {
		t.Errorf("left %+v, want the invalid line left for the unknown history mode", fp.Left)
	}
}

// TestDerivedIDTime: an id repair derives on a line whose timestamp does
// not parse takes the nearest valid time, before the line or else after it,
// never zero (which would sort before every real id).
func TestDerivedIDTime(t *testing.T) {
	noID := `{"timestamp":"yesterday","type":"response_item","payload":{"type":"message","role":"assistant","content":"ok"}}`
	later := `{"timestamp":"2026-03-10T09:40:00.000Z","type":"response_item","payload":{"type":"message","id":"msg_019cd6f7-0000-7000-8000-000000000001","role":"user","content":"next"}}`
	badMeta := strings.Replace(meta, `"2026-03-10T09:35:30.037Z"`, `"10 March"`, 1)
	for _, tc := range []struct {
		name, in string
		want     time.Time
	}{
		{"before", meta + "\n" + item + "\n" + noID + "\n", time.Date(2026, 3, 10, 9, 35, 30, 111e6, time.UTC)},
		{"after", badMeta + "\n" + noID + "\n" + later + "\n", time.Date(2026, 3, 10, 9, 40, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := plan(t, tc.in, "item/missing-id")
			var out bytes.Buffer
			if _, err := rollout.Rewrite(&out, strings.NewReader(tc.in), &fp.Plan, rollout.RewriteOptions{}); err != nil {
				t.Fatal(err)
			}
			line := strings.Split(out.String(), "\n")[1]
			if !strings.Contains(line, `"yesterday"`) {
				line = strings.Split(out.String(), "\n")[2]
			}
			_, rest, ok := strings.Cut(line, `"id":"msg_`)
			if !ok {
				t.Fatalf("no id assigned: %s", out.String())
			}
			got, err := rollout.ParseUUIDv7(rest[:36])
			if err != nil {
				t.Fatal(err)
			}
			if !got.UTC().Equal(tc.want) {
				t.Errorf("id time %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRenumberFrom: ordinals are renumbered from the first line that needs
// it, the first bad ordinal or the first structural edit, whichever is first.
func TestRenumberFrom(t *testing.T) {
	pm := strings.Replace(meta, `"payload":{`, `"ordinal":0,"payload":{"history_mode":"paginated",`, 1)
	it := func(ord int) string {
		return strings.Replace(item, `"type":"response_item"`, `"ordinal":`+strconv.Itoa(ord)+`,"type":"response_item"`, 1)
	}
	dup := func(ord, n int) string {
		return strings.Replace(it(ord), "00000000000b", fmt.Sprintf("%012x", n), 1)
	}
	for _, tc := range []struct {
		name string
		in   string
		from int
	}{
		{"duplicate", pm + "\n" + dup(1, 1) + "\n" + dup(2, 2) + "\n" + dup(2, 3) + "\n" + dup(3, 4) + "\n", 4},
		{"dropped line first", pm + "\n" + dup(1, 1) + "\ngarbage\n" + dup(2, 2) + "\n" + dup(2, 3) + "\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := plan(t, tc.in)
			if fp.Plan.Sequence == nil || fp.Plan.Sequence.From != tc.from {
				t.Fatalf("sequence %+v, want one from line %d", fp.Plan.Sequence, tc.from)
			}
		})
	}
}

func mustSelect(t *testing.T, sel ...string) FixSet {
	t.Helper()
	fs, err := SelectFixes(sel)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestHashSet(t *testing.T) {
	var in []uint64
	for i := uint64(0); i < 1000; i++ {
		in = append(in, i*7919) // 0 included
	}
	s := newHashSet(in)
	for _, h := range in {
		if !s.has(h) {
			t.Fatalf("%d: added, not found", h)
		}
	}
	for i := uint64(0); i < 1000; i++ {
		if h := i*7919 + 1; s.has(h) {
			t.Fatalf("%d: found, never added", h)
		}
	}
	if e := newHashSet(nil); e.has(0) || e.has(42) {
		t.Errorf("the empty set has members")
	}
}

func TestSharedEditsOncePerLine(t *testing.T) {
	p := &planner{fp: &FixPlan{}}
	for _, line := range []int{2, 5, 5, 3, 5, 3, 7, 7, 2} { // in order, then not
		p.addLineEdit(line, "drop", rollout.EditDrop, "line/blank")
	}
	p.addLineEdit(3, "split", rollout.EditSplit, "line/concatenated")
	lines := map[int][]rollout.EditKind{}
	for line, edits := range p.fp.Plan.Lines {
		for _, e := range edits {
			lines[line] = append(lines[line], e.Kind)
		}
	}
	want := map[int][]rollout.EditKind{2: {rollout.EditDrop}, 3: {rollout.EditDrop, rollout.EditSplit}, 5: {rollout.EditDrop}, 7: {rollout.EditDrop}}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("planned edits (-want +got):\n%s", diff)
	}
	if !p.structural {
		t.Errorf("a drop is structural")
	}
}
