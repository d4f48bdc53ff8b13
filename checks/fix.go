package checks

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/reconstruct/frames"
	"github.com/rollout-dev/rollout/rollout"
)

// Fix planning: what `rollout repair` changes, decided from the findings of
// one analysis. Each fixable rule has one fixer below; a fixer turns a
// finding into edits for the byte-preserving writer (rollout.Rewrite), which
// knows bytes, not rules.

// FixFacts gathers, while a file is analysed, what planning needs beyond
// the findings. Pass its Observe to Run or RunReader as an observer.
type FixFacts struct {
	compacted []int          // lines of compacted records, in file order
	frameDrop []frames.Range // superseded delta lines of frame logs (frames_fix.go)
	anchors   map[int]int64  // lines whose timestamp does not parse -> the nearest valid time (Unix ms)
	pending   []int          // such lines with no valid time before them, awaiting one after
}

// Observe records the facts of one observation.
func (f *FixFacts) Observe(o reconstruct.Observation) {
	switch ev := o.Evidence.(type) {
	case reconstruct.FlowTimeAnchorEvidence:
		f.anchor(o.Pos, ev)
	case reconstruct.FlowCompactionEvidence:
		f.compacted = append(f.compacted, o.Pos.Line)
	case reconstruct.FlowFramesReclaimEvidence:
		f.frameDrop = append(f.frameDrop, ev.Drop...)
	}
}

// anchor records the time an id derived on a line without a valid
// timestamp takes: the nearest valid one before it, or after it when there
// is none before.
func (f *FixFacts) anchor(pos reconstruct.Pos, ev reconstruct.FlowTimeAnchorEvidence) {
	if f.anchors == nil {
		f.anchors = map[int]int64{}
	}
	if ev.After != 0 {
		for _, l := range f.pending {
			f.anchors[l] = ev.After
		}
		f.pending = f.pending[:0]
		return
	}
	if ev.Before != 0 {
		f.anchors[pos.Line] = ev.Before
	} else {
		f.pending = append(f.pending, pos.Line)
	}
}

// FixOptions choose the fixes and how ids are made.
type FixOptions struct {
	// Fix is the fixes to plan, from SelectFixes; nil: the default set.
	Fix FixSet
	// RandomIDs makes new ids from random bits instead of deriving them
	// from (thread id, line, item index).
	RandomIDs bool
	Random    io.Reader // for RandomIDs; crypto/rand when nil
}

// FixPlan is the repair of one file.
type FixPlan struct {
	Plan    rollout.Plan
	Planned []PlannedFix // findings the plan addresses
	Left    []Unfixed    // findings of fixable rules it leaves, and why

	planned []uint64 // bit i: the analysed Result's Findings[i] is planned
}

// PlannedFix names a finding the plan addresses: its rule and line (a
// plan of a million fixes does not keep a million findings).
type PlannedFix struct {
	Rule string
	Line int
}

// Unplanned returns, in a new slice, the findings of fs (the Result the
// plan was made from) that no planned fix addresses: what a repair keeps
// of its input's findings once the plan is made.
func (fp *FixPlan) Unplanned(fs []Finding) []Finding {
	var out []Finding
	for i := range fs {
		if !fp.IsPlanned(i) {
			out = append(out, fs[i])
		}
	}
	return out
}

// Unfixed is a finding of a fixable rule that the plan does not fix: its
// rule and line (the finding itself stays in the analysis's Findings; a
// million opt-in findings left are not kept twice).
type Unfixed struct {
	Rule   string
	Line   int
	Reason string
}

// MarkerKey is the member repair adds to a line it creates, naming the rule.
const MarkerKey = "rollout_repair"

// FixSet is the rule ids whose fixes a repair applies.
type FixSet map[string]bool

// SelectFixes resolves --fix selectors (rule ids, areas such as "ordinal/",
// "default": the fixes not marked opt-in, or "all"; none: "default") into
// the set of rule ids to fix. It is --fix's one parser.
func SelectFixes(sel []string) (FixSet, error) {
	out := FixSet{}
	if len(sel) == 0 {
		sel = []string{"default"}
	}
	for _, s := range sel {
		s = strings.TrimSpace(s)
		matched, fixable := false, false
		for _, r := range registry {
			var ok bool
			switch s {
			case "default":
				ok = r.Fixable() && !r.OptIn
			case "all":
				ok = r.Fixable()
			default:
				ok = selects(s, r.ID) || (!strings.Contains(s, "/") && r.Area() == s)
			}
			if !ok {
				continue
			}
			matched = true
			if r.Fixable() {
				fixable = true
				out[r.ID] = true
			}
		}
		switch {
		case !matched:
			return nil, unknownRule(s, "--fix")
		case !fixable:
			return nil, fmt.Errorf("--fix %s: repair has no fix for it", s)
		}
	}
	return out, nil
}

// PlanFixes plans the fixes of the selected rules for the findings of one
// analysis. facts may be nil when the file has no compactions to follow.
func PlanFixes(res *Result, facts *FixFacts, opts FixOptions) (*FixPlan, error) {
	return planFixes(res.State, len(res.Findings), func(i int) Finding { return res.Findings[i] }, facts, opts)
}

// PlanAnalysis is PlanFixes of an Analysis: no finding is made but to be
// planned (FixPlan.IsPlanned tells which ones the plan addresses).
func PlanAnalysis(a *Analysis, facts *FixFacts, opts FixOptions) (*FixPlan, error) {
	return planFixes(a.State, a.Len(), a.At, facts, opts)
}

// IsPlanned reports whether the plan addresses finding i of the analysis
// it was made from.
func (fp *FixPlan) IsPlanned(i int) bool {
	return i/64 < len(fp.planned) && fp.planned[i/64]&(1<<(i%64)) != 0
}

// planFixes plans the n findings at(0), at(1), ... of an analysis with
// state st.
func planFixes(st *reconstruct.State, n int, at func(int) Finding, facts *FixFacts, opts FixOptions) (*FixPlan, error) {
	sel := opts.Fix
	if sel == nil {
		sel, _ = SelectFixes(nil)
	}
	if facts == nil {
		facts = &FixFacts{}
	}
	// Sized once for the findings whose fix is selected (a plan of 100,000
	// ids is not grown step by step), but for the ordinal rules: one
	// sequence renumbers them all, and a million lines without ordinal
	// must not reserve a million edits. The findings a plan leaves are
	// counted too: a million opt-in findings left are not grown step by
	// step either.
	fixable, left := 0, 0
	for i := range n {
		r, ok := Lookup(at(i).Rule)
		switch {
		case !ok || r.plan == nil:
		case !sel[r.ID] || st.FailClosed:
			left++
		case !strings.HasPrefix(r.ID, "ordinal/"):
			fixable++
		}
	}
	p := &planner{
		st:       st,
		fp:       &FixPlan{Planned: make([]PlannedFix, 0, fixable), Left: make([]Unfixed, 0, left), planned: make([]uint64, (n+63)/64)},
		concat:   map[int]bool{},
		seen:     map[plannedKey]bool{}, // the edits of add (shared edits dedupe themselves)
		envelope: st.Era != rollout.EraBare,
		ids:      newIDSource(st, opts),
		facts:    facts,
	}
	p.ids.anchors = facts.anchors
	p.fp.Plan.Grow(fixable)
	optIn := map[string]string{}
	for i := range n {
		if f := at(i); f.Facts != nil {
			if _, ok := f.Facts.(reconstruct.LineConcatenatedEvidence); ok {
				p.concat[f.Line] = true
			}
		}
	}
	for i := range n {
		f := at(i)
		r, ok := Lookup(f.Rule)
		if !ok || r.plan == nil {
			continue
		}
		if st.FailClosed {
			// Even a line-level fix needs the history mode: removing a
			// line may call for renumbering under rules rollout does not know.
			p.fp.Left = append(p.fp.Left, Unfixed{f.Rule, f.Line, "history_mode " + st.HistoryMode + " is unknown: repair changes nothing in a file it cannot replay"})
			continue
		}
		if !sel[f.Rule] {
			why := "not selected"
			if r.OptIn {
				why = optIn[f.Rule]
				if why == "" {
					why = "opt-in: add --fix " + f.Rule // one string per rule, not per finding
					optIn[f.Rule] = why
				}
			}
			p.fp.Left = append(p.fp.Left, Unfixed{f.Rule, f.Line, why})
			continue
		}
		if why := r.plan(p, f); why != "" {
			p.fp.Left = append(p.fp.Left, Unfixed{f.Rule, f.Line, why})
			continue
		}
		p.fp.Planned = append(p.fp.Planned, PlannedFix{f.Rule, f.Line})
		p.fp.planned[i/64] |= 1 << (i % 64)
	}
	p.metaInFirstLine(sel)
	p.idsEverywhere(sel)
	p.sequence()
	p.repetitions(facts)
	return p.fp, nil
}

type planner struct {
	facts    *FixFacts
	st       *reconstruct.State
	fp       *FixPlan
	concat   map[int]bool        // lines holding several objects
	seen     map[plannedKey]bool // edits already planned (several findings, one edit)
	shared   map[sharedKey]*sharedEdit
	envelope bool
	ids      *idSource

	matches map[string]func([]byte) bool                       // itemMatch, by line type
	values  map[int]func(*rollout.EditContext) ([]byte, error) // idValue, by item index

	structural  bool       // lines are removed, added, split or moved
	ordinals    []lineRule // ordinal findings, for the labels of the renumbering
	firstIDLine int        // first line given an id that later copies must share
}

// plannedKey names one planned edit: its line, rule and what it edits.
type plannedKey struct {
	line       int
	label, key string
}

type lineRule struct {
	line int
	rule string
}

// add plans an edit once: several findings can ask for the same one.
func (p *planner) add(line int, key string, e rollout.Edit) {
	if p.first(line, e.Label, key) {
		p.fp.Plan.Add(line, e)
		p.note(e)
	}
}

// drops reports whether the plan already removes line (another rule's
// fix of the same copy).
func (p *planner) drops(line int) bool {
	for _, e := range p.fp.Plan.At(line) {
		if e.Kind == rollout.EditDrop {
			return true
		}
	}
	return false
}

// addShared is add of an edit that differs from line to line only in its
// line: one Edit serves them all (a plan of a million ids keeps one).
// make builds it the first time; id names it among the shared edits (the
// key of a shared edit is its id's: their keys and those of add never
// meet).
//
// The lines are deduplicated without a set while they come in order, as
// the findings do: only an edit planned for a line before the last one
// (a frame log's reclaimed ranges) makes a set of the edit's lines.
func (p *planner) addShared(line int, key string, id sharedKey, make func() rollout.Edit) {
	sh := p.shared[id]
	if sh == nil {
		e := make()
		sh = &sharedEdit{ref: p.fp.Plan.Define(e)}
		if p.shared == nil {
			p.shared = map[sharedKey]*sharedEdit{}
		}
		p.shared[id] = sh
		p.note(e)
	}
	switch {
	case sh.lines != nil:
		if sh.lines[line] {
			return
		}
		sh.lines[line] = true
	case line == sh.last:
		return
	case line < sh.last:
		sh.lines = map[int]bool{}
		for _, l := range p.fp.Plan.LinesOf(sh.ref) {
			sh.lines[l] = true
		}
		if sh.lines[line] {
			return
		}
		sh.lines[line] = true
	default:
		sh.last = line
	}
	p.fp.Plan.AddShared(line, sh.ref)
}

// sharedEdit is a shared edit and the lines it is planned for.
type sharedEdit struct {
	ref   rollout.EditRef
	last  int          // the last line, while they come in order
	lines map[int]bool // every line, once one came out of order
}

// addLineEdit plans an edit of a whole line that has no other field
// (drop, split, lf): one Edit per rule serves every line.
func (p *planner) addLineEdit(line int, key string, kind rollout.EditKind, rule string) {
	p.addShared(line, key, sharedKey{kind, rule, ""}, func() rollout.Edit { return rollout.Edit{Kind: kind, Label: rule} })
}

// sharedKey names an edit shared between lines: its rule and what picks
// the objects it edits.
type sharedKey struct {
	kind            rollout.EditKind
	label, lineType string
}

// first reports whether the edit (line, label, key) is not planned yet,
// and notes it.
func (p *planner) first(line int, label, key string) bool {
	k := plannedKey{line, label, key}
	if p.seen[k] {
		return false
	}
	p.seen[k] = true
	return true
}

func (p *planner) note(e rollout.Edit) {
	switch e.Kind {
	case rollout.EditDrop, rollout.EditSplit, rollout.EditMoveFront, rollout.EditInsertAfter, rollout.EditCut:
		p.structural = true
	}
}

// --- line shape ---

// dropLine moves an unreadable line (torn tail, invalid JSON) to quarantine.
func dropLine(p *planner, f Finding) string {
	p.addLineEdit(f.Line, "drop", rollout.EditDrop, f.Rule)
	return ""
}

// splitLine writes each object of a concatenated line on its own line.
func splitLine(p *planner, f Finding) string {
	p.addLineEdit(f.Line, "split", rollout.EditSplit, f.Rule)
	return ""
}

// normaliseEOL ends a CRLF line with LF.
func normaliseEOL(p *planner, f Finding) string {
	p.addLineEdit(f.Line, "lf", rollout.EditLF, f.Rule)
	return ""
}

// validUTF8 replaces, in each object of the line, every byte sequence that
// is not UTF-8 with U+FFFD (the bytes Codex refuses; the rest stay).
func validUTF8(p *planner, f Finding) string {
	p.add(f.Line, "utf8", rollout.Edit{Kind: rollout.EditSplice, Label: f.Rule,
		Splice: func(obj []byte) (int, int, []byte, error) {
			if utf8.Valid(obj) {
				return 0, 0, nil, fmt.Errorf("%w: line %d: the object is UTF-8", rollout.ErrSkipEdit, f.Line)
			}
			return 0, len(obj), bytes.ToValidUTF8(obj, []byte("\uFFFD")), nil
		}})
	return ""
}

// --- session_meta ---

// moveMeta moves the first session_meta to line 1.
func moveMeta(p *planner, f Finding) string {
	p.add(f.Line, "move", rollout.Edit{Kind: rollout.EditMoveFront, Label: f.Rule, Match: lineTypeIs(rollout.TypeSessionMeta)})
	return ""
}

// metaInFirstLine covers the case the engine cannot see: session_meta as a
// later object of a concatenated first line. Splitting it would leave the
// meta on line 2; moving it keeps it first (a no-op when it already is).
func (p *planner) metaInFirstLine(sel map[string]bool) {
	m := p.st.MetaLine
	if m == 0 || !p.concat[m] || !sel["line/concatenated"] || !sel["meta/not-first"] || !p.envelope {
		return
	}
	if p.hasKind(m, rollout.EditMoveFront) {
		return
	}
	p.add(m, "move", rollout.Edit{Kind: rollout.EditMoveFront, Label: "meta/not-first", Match: lineTypeIs(rollout.TypeSessionMeta)})
}

func (p *planner) hasKind(line int, k rollout.EditKind) bool {
	for _, e := range p.fp.Plan.At(line) {
		if e.Kind == k {
			return true
		}
	}
	return false
}

// --- ordinals ---

// renumber asks for the ordinals to be renumbered 0..n-1; one sequence
// serves every ordinal finding.
func renumber(p *planner, f Finding) string {
	if p.st.HistoryMode != rollout.HistoryPaginated {
		return "the file is not paginated"
	}
	// The label of a renumbered line is the rule of the nearest finding at
	// or before it: a finding after one of the same rule changes no label,
	// so a million lines without ordinal keep one entry.
	if n := len(p.ordinals); n > 0 && p.ordinals[n-1].rule == f.Rule && p.ordinals[n-1].line <= f.Line {
		return ""
	}
	p.ordinals = append(p.ordinals, lineRule{f.Line, f.Rule})
	return ""
}

// sequence turns renumbering on when ordinals are wrong (and their fix is
// selected), or when the plan adds, removes or moves lines of a paginated
// file (the ordinals would then be wrong after it).
func (p *planner) sequence() {
	if p.st.HistoryMode != rollout.HistoryPaginated || !p.envelope {
		return
	}
	// Renumbering is the fix of the ordinal findings, and part of any fix
	// that removes, adds or moves lines of a paginated file.
	if len(p.ordinals) == 0 && !p.structural {
		return
	}
	rules := p.ordinals
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].line < rules[j].line })
	// Codex's history projection (thread_history_1.sqlite) is keyed by
	// ordinal: renumber from the first line that needs it, never before.
	from := 0
	if len(rules) > 0 {
		from = rules[0].line
	}
	for line, edits := range p.fp.Plan.Lines {
		for _, e := range edits {
			switch e.Kind {
			case rollout.EditDrop, rollout.EditSplit, rollout.EditInsertAfter, rollout.EditMoveFront, rollout.EditCut:
				if from == 0 || line < from {
					from = line
				}
			}
		}
	}
	for _, e := range p.fp.Plan.Every {
		if e.Kind != rollout.EditSet {
			from = 1 // a structural edit that may match any line
		}
	}
	p.fp.Plan.Sequence = &rollout.Sequence{Key: "ordinal", After: "timestamp", From: from, Start: p.st.OrdinalBase, Label: func(line int) string {
		// A line is renumbered because of the nearest ordinal finding at
		// or before it; lines shifted by a removal count as a gap.
		i := sort.Search(len(rules), func(i int) bool { return rules[i].line > line })
		if i == 0 {
			return "ordinal/gap"
		}
		return rules[i-1].rule
	}}
}

// --- item ids ---

// payloadPath is the Path of an edit of a line's item: one slice shared by
// every edit (the rewriter never modifies a Path).
var payloadPath = []string{"payload"}

// itemPath is the path of a line's item: its payload (envelope) or the
// line itself (bare era); index >= 0 names an element of a compaction's
// replacement history.
func (p *planner) itemPath(index int) []string {
	if index >= 0 {
		return []string{"payload", "replacement_history", strconv.Itoa(index)}
	}
	if !p.envelope {
		return nil
	}
	return payloadPath
}

// idMissing is the When of an edit that gives an item without id one.
func idMissing(old []byte, _ bool) bool { return rollout.DecodeString(old) == "" }

// assignID gives an item (or an inter-agent message) without id a new one:
// the item at index of a line of lineType.
func assignID(p *planner, f Finding, index int, lineType string) string {
	if index >= 0 {
		return "the item is inside a compaction's replacement history"
	}
	p.addShared(f.Line, "id", sharedKey{rollout.EditSet, f.Rule, lineType}, func() rollout.Edit {
		return rollout.Edit{
			Kind: rollout.EditSet, Label: f.Rule, Path: p.itemPath(index), Key: "id",
			Match:    p.itemMatch(lineType, index),
			When:     idMissing,
			Value:    p.idValue(index),
			Remember: true,
		}
	})
	p.noteID(f.Line)
	return ""
}

// replaceID gives an item whose id is wrong (prefix) or taken (duplicate)
// a fresh one: id, at index of its line.
func replaceID(p *planner, f Finding, id string, index int) string {
	if id == "" {
		return "the finding does not name the id"
	}
	return freshID(p, f, id, index)
}

// freshID gives the item at index whose id is id ("" too) a fresh one.
func freshID(p *planner, f Finding, id string, index int) string {
	p.add(f.Line, "id:"+strconv.Itoa(index)+":"+id, rollout.Edit{
		Kind: rollout.EditSet, Label: f.Rule, Path: p.itemPath(index), Key: "id",
		Match:    p.itemMatch("", index), // a response item or an inter-agent message
		When:     func(old []byte, ok bool) bool { return ok && rollout.DecodeString(old) == id },
		Value:    p.idValue(index),
		Remember: index < 0,
		Recall:   index >= 0,
	})
	p.noteID(f.Line)
	return ""
}

// idsEverywhere: a file with no locally formed id does not "use ids", and
// its id-less items are normal. The first id repair forms changes that,
// and every id-less item would then be reported: so they all get one in
// the same run, or a second repair would not be a no-op.
func (p *planner) idsEverywhere(sel map[string]bool) {
	if p.firstIDLine == 0 || !p.envelope || p.st.UsesItemIDs || p.st.HistoryMode == rollout.HistoryPaginated {
		return
	}
	if sel["item/missing-id"] {
		p.fp.Plan.Every = append(p.fp.Plan.Every, rollout.Edit{Kind: rollout.EditSet, Label: "item/missing-id",
			Path: payloadPath, Key: "id", Match: p.itemMatch(rollout.TypeResponseItem, -1),
			When: idMissing, Value: p.idValue(-1), Remember: true})
		p.firstIDLine = 1
	}
	if sel["agentcomm/missing-id"] {
		p.fp.Plan.Every = append(p.fp.Plan.Every, rollout.Edit{Kind: rollout.EditSet, Label: "agentcomm/missing-id",
			Path: payloadPath, Key: "id", Match: p.itemMatch(rollout.TypeInterAgent, -1),
			When: idMissing, Value: p.idValue(-1)})
	}
}

func (p *planner) noteID(line int) {
	if p.firstIDLine == 0 || line < p.firstIDLine {
		p.firstIDLine = line
	}
}

// repetitions gives the copies of a re-identified item inside later
// compactions' replacement histories the same id (matched by their bytes).
func (p *planner) repetitions(facts *FixFacts) {
	if p.firstIDLine == 0 || !p.envelope {
		return
	}
	for _, line := range facts.compacted {
		if line <= p.firstIDLine {
			continue
		}
		p.add(line, "fill", rollout.Edit{Kind: rollout.EditFill, Label: "item/missing-id",
			Match: lineTypeIs(rollout.TypeCompacted), Path: []string{"payload", "replacement_history"}, Key: "id"})
	}
}

// itemMatch selects the objects of a line an item edit applies to (it
// matters on concatenated lines): envelope lines of the given type ("" any).
// One function per line type serves every edit.
func (p *planner) itemMatch(lineType string, index int) func([]byte) bool {
	if !p.envelope {
		return nil
	}
	if index >= 0 {
		lineType = rollout.TypeCompacted
	}
	if lineType == "" {
		return nil
	}
	if m, ok := p.matches[lineType]; ok {
		return m
	}
	m := lineTypeIs(lineType)
	if lineType == rollout.TypeResponseItem {
		// Only items whose type takes an id (the engine reports no others).
		m = func(obj []byte) bool {
			_, typed := rollout.ItemPrefix(rollout.DecodeString(member(member(obj, "payload"), "type")))
			return typed && stringIs(member(obj, "type"), lineType)
		}
	}
	if p.matches == nil {
		p.matches = map[string]func([]byte) bool{}
	}
	p.matches[lineType] = m
	return m
}

// idValue is the Value of the id edits of items at index: one function
// per index serves every edit.
func (p *planner) idValue(index int) func(*rollout.EditContext) ([]byte, error) {
	if v, ok := p.values[index]; ok {
		return v
	}
	v := p.ids.value(index)
	if p.values == nil {
		p.values = map[int]func(*rollout.EditContext) ([]byte, error){}
	}
	p.values[index] = v
	return v
}

// --- handoffs (handoffs.md: only the latest record's line is edited) ---

// fixHandoff edits the record of handoff id on its latest line with
// action (handoff_fix.go, where each handoff edit is decided).
func fixHandoff(p *planner, f Finding, id string, action handoffAction) string {
	if id == "" || !p.envelope {
		return "the finding does not name the handoff"
	}
	p.add(f.Line, "handoff:"+f.Rule+":"+id, rollout.Edit{Kind: rollout.EditSplice, Label: f.Rule, Key: "payload",
		Match: func(obj []byte) bool {
			return rollout.DecodeString(member(obj, "type")) == rollout.TypeContextHandoff &&
				rollout.DecodeString(member(member(obj, "payload"), "id")) == id
		},
		Splice: func(obj []byte) (int, int, []byte, error) {
			start, end, repl, err := planHandoffEdit(obj, id, action)
			if err != nil {
				return 0, 0, nil, fmt.Errorf("%w: %s on line %d (handoff %s): %v", rollout.ErrSkipEdit, f.Rule, f.Line, id, err)
			}
			return start, end, repl, nil
		}})
	return ""
}

// --- helpers ---

func lineTypeIs(t string) func([]byte) bool {
	return func(obj []byte) bool { return stringIs(member(obj, "type"), t) }
}

// stringIs reports whether rollout.DecodeString(v) == s, without making
// the string when v has no escapes.
func stringIs(v []byte, s string) bool {
	if b, ok := rollout.StringValue(v); ok {
		return string(b) == s
	}
	return rollout.DecodeString(v) == s
}

// member is the raw value of a top-level member of a JSON object (nil when
// absent or when obj is not an object).
func member(obj []byte, key string) []byte {
	var v []byte
	rollout.Members(obj, func(k []byte, s, e int) bool {
		if string(k) == key {
			v = obj[s:e]
			return false
		}
		return true
	})
	return v
}

// lineMillis is the Unix-millisecond time of an envelope line's timestamp,
// or 0 when it has none that parses.
// millis is the time an id made on the edited line takes: the line's own,
// or for a line whose timestamp does not parse the nearest valid one
// (FixFacts.anchor), so a derived id never sorts before every real one.
func (s *idSource) millis(c *rollout.EditContext) int64 {
	if ms := lineMillis(c.Object); ms != 0 {
		return ms
	}
	return s.anchors[c.Line]
}

func lineMillis(obj []byte) int64 {
	ts := rollout.DecodeString(member(obj, "timestamp"))
	if ts == "" {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// idSource makes the ids repair assigns: <prefix>_<uuidv7> with the line's
// own time and random bits derived from (thread id, line, item index), or
// random ones with FixOptions.RandomIDs. A second rewrite of the same plan
// (for --diff) must give the same ids: a derived id is made again (the salt
// of the rare one that collided is kept), a random one is remembered.
//
// Each id is checked against the live ids, kept as a sorted slice of 64-bit
// hashes (8 bytes per live id, no copy of them): an id the file already has
// is never given. The ids assigned are not recorded: two derived ids come
// from distinct (line, index) pairs through SHA-256, so they differ but with
// a chance of 2^-74, and should they not, the re-verification of the result
// reports the duplicate and the write is refused (repair's guard). A plan
// of a million ids holds nothing per id here.
type idSource struct {
	anchors map[int]int64 // FixFacts.anchors: times for lines whose own does not parse
	thread  string
	random  io.Reader
	live    hashSet          // hashes of the live ids
	salts   map[idKey]int    // derived ids that needed a salt
	memo    map[idKey]string // RandomIDs: the ids given
}

type idKey struct {
	prefix      string
	line, index int
}

func newIDSource(st *reconstruct.State, opts FixOptions) *idSource {
	s := &idSource{thread: st.ThreadID}
	if opts.RandomIDs {
		s.random = opts.Random
		if s.random == nil {
			s.random = rand.Reader
		}
		s.memo = map[idKey]string{}
	}
	var hs []uint64
	for it := range st.History.All() {
		if it.ID != "" {
			hs = append(hs, idHash(it.ID))
		}
	}
	s.live = newHashSet(hs)
	return s
}

// isLive reports whether an id with hash h is in the file.
func (s *idSource) isLive(h uint64) bool { return s.live.has(h) }

// hashSet is a set of 64-bit hashes: an open-addressing table at most half
// full, 16 bytes per member and one probe or two per lookup (a Go map costs
// about three times that).
type hashSet struct {
	slots   []uint64 // 0: empty
	shift   uint     // 64 - log2(len(slots)): slot of h is the top bits of h times the golden ratio
	hasZero bool     // 0 is a member
}

func newHashSet(hs []uint64) hashSet {
	var s hashSet
	n, bits := 8, uint(3)
	for n < 2*len(hs) {
		n, bits = n*2, bits+1
	}
	s.slots, s.shift = make([]uint64, n), 64-bits
	for _, h := range hs {
		s.add(h)
	}
	return s
}

func (s *hashSet) add(h uint64) {
	if h == 0 {
		s.hasZero = true
		return
	}
	mask := uint64(len(s.slots) - 1)
	for i := (h * 0x9e3779b97f4a7c15) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return
		case 0:
			s.slots[i] = h
			return
		}
	}
}

func (s *hashSet) has(h uint64) bool {
	if h == 0 {
		return s.hasZero
	}
	mask := uint64(len(s.slots) - 1)
	for i := (h * 0x9e3779b97f4a7c15) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// plainASCII reports whether strconv.Quote leaves s as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// idHash is FNV-1a: deterministic, so the ids (salts) never depend on the run.
func idHash[T string | []byte](b T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * 1099511628211
	}
	return h
}

// id returns the id for (prefix, line, index); ms is the line's time.
func (s *idSource) id(prefix string, ms int64, line, index int) string {
	return string(s.appendID(nil, prefix, ms, line, index))
}

// appendID appends id(prefix, ms, line, index) to dst.
func (s *idSource) appendID(dst []byte, prefix string, ms int64, line, index int) []byte {
	k := idKey{prefix, line, index}
	if s.memo != nil {
		if id, ok := s.memo[k]; ok {
			return append(dst, id...)
		}
	}
	start := len(dst)
	for salt := s.salts[k]; ; salt++ {
		dst = append(append(dst[:start], prefix...), '_')
		if s.random != nil {
			var r [10]byte
			if _, err := io.ReadFull(s.random, r[:]); err != nil {
				panic(fmt.Sprintf("reading random bits: %v", err))
			}
			dst = rollout.AppendUUIDv7(dst, ms, r)
		} else {
			// A collision with an existing id is astronomically unlikely;
			// if it happens, derive again from a salted index.
			dst = rollout.AppendDerivedUUIDv7(dst, ms, s.thread, line, index+salt<<48)
		}
		if s.isLive(idHash(dst[start:])) {
			continue
		}
		if s.memo != nil {
			s.memo[k] = string(dst[start:])
		} else if salt > 0 {
			if s.salts == nil {
				s.salts = map[idKey]int{}
			}
			s.salts[k] = salt
		}
		return dst
	}
}

// value is the Value of an id edit: the prefix comes from the item's type
// (inter-agent messages: amsg); objects after the first of a concatenated
// line get distinct indexes (part × 2^32).
func (s *idSource) value(index int) func(*rollout.EditContext) ([]byte, error) {
	return func(c *rollout.EditContext) ([]byte, error) {
		prefix, ok := rollout.ItemPrefix(rollout.DecodeString(member(c.Target, "type")))
		if rollout.DecodeString(member(c.Object, "type")) == rollout.TypeInterAgent && index < 0 {
			prefix, ok = rollout.InterAgentPrefix, true
		}
		if !ok {
			old := rollout.DecodeString(member(c.Target, "id"))
			if prefix, _, ok = rollout.SplitID(old); !ok {
				return nil, fmt.Errorf("%w: the item's type has no id prefix", rollout.ErrSkipEdit)
			}
		}
		quoted := s.appendID(append(make([]byte, 0, 48), '"'), prefix, s.millis(c), c.Line, index+c.Part<<32)
		if plainASCII(prefix) {
			return append(quoted, '"'), nil // what strconv.Quote gives, made in place
		}
		return strconv.AppendQuote(nil, string(quoted[1:])), nil
	}
}
