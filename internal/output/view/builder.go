package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/internal/output/htmlpage"
	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Options bound what the page holds.
type Options struct {
	Path  string
	Bytes int64 // the file's size, for the header (0: unknown)
	// MaxText is the longest string kept for the page, in bytes; longer
	// ones are cut and show their full size (0: DefaultMaxText).
	MaxText int
	// MaxItems is the number of a compaction's replacement items listed
	// (0: DefaultMaxItems).
	MaxItems int
	// MaxRecords is the number of records the page shows; later ones are
	// only counted (0: DefaultMaxRecords). Runs of blank or unreadable
	// lines count as one.
	MaxRecords int
	// MaxTotalText bounds the text the page keeps; past it, records show
	// their titles and sizes only (0: DefaultMaxTotalText).
	MaxTotalText int64
}

// Defaults of Options.
const (
	DefaultMaxText  = 4000
	DefaultMaxItems = 200
	// With these, the page model stays under about 100 MB whatever the
	// file, and a browser still opens the page.
	DefaultMaxRecords   = 100_000
	DefaultMaxTotalText = 64 << 20
	collapseAt          = 600 // longer texts of tool calls and outputs start collapsed
	previewText         = 160 // one-line previews (events, replacement items)
)

// Builder collects the page while the file is replayed.
type Builder struct {
	opts   Options
	page   Page
	turn   *Turn
	all    []*Entry // every entry in line order, outputs included
	calls  map[string]*Entry
	spans  []span // rolled-back line ranges
	compas []int  // lines of compactions
	era    rollout.Era
	seen   bool  // an object record was seen (the era is known)
	kept   int64 // bytes of text kept

	// The merged world state is shown once per run of patches, at its last
	// one, and within a budget: shown at every patch, a state that grows
	// with each made the page and its time grow with the square of the
	// patches.
	pending    *Entry            // the last patch of the current run
	pendingV   *mergepatch.Value // the state after it
	runPatches int               // patches in the run
	stateBytes int               // bytes of merged states shown so far
}

type span struct{ from, at int }

// New starts a page.
func New(opts Options) *Builder {
	if opts.MaxText <= 0 {
		opts.MaxText = DefaultMaxText
	}
	if opts.MaxItems <= 0 {
		opts.MaxItems = DefaultMaxItems
	}
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = DefaultMaxRecords
	}
	if opts.MaxTotalText <= 0 {
		opts.MaxTotalText = DefaultMaxTotalText
	}
	b := &Builder{opts: opts, calls: map[string]*Entry{}}
	b.page.Path, b.page.Bytes = opts.Path, opts.Bytes
	b.turn = &Turn{Index: 0}
	b.page.Turns = []*Turn{b.turn}
	return b
}

func (b *Builder) add(e *Entry) *Entry {
	if b.pending != nil && e.Kind != "world" {
		b.showState()
	}
	if b.full() {
		b.page.NotShown++
		return e
	}
	b.all = append(b.all, e)
	b.turn.Records = append(b.turn.Records, e)
	return e
}

func (b *Builder) full() bool { return len(b.all) >= b.opts.MaxRecords }

// broken adds an unreadable line; a run of lines of the same kind is one
// entry (a file of a million blank lines is one record on the page).
func (b *Builder) broken(rec *rollout.Record, title string, minor bool, raw bool) {
	if n := len(b.all); n > 0 {
		if last := b.all[n-1]; last.Kind == "broken" && last.Title == title && last.LastLine+1 == rec.Line {
			last.LastLine = rec.Line
			last.Meta = fmt.Sprintf("lines %d-%d", last.Line, last.LastLine)
			return
		}
	}
	e := &Entry{Line: rec.Line, LastLine: rec.Line, Offset: rec.Offset, Kind: "broken", Title: title, Minor: minor, Meta: htmlpage.Bytes(rec.Size)}
	if raw {
		e.Blocks = []Block{b.block("raw", string(rec.Raw), true)}
	}
	b.add(e)
}

// Record adds one record; it keeps nothing of rec beyond the call.
func (b *Builder) Record(rec *rollout.Record) {
	switch rec.Shape {
	case rollout.ShapeBlank:
		b.broken(rec, "blank line", true, false)
	case rollout.ShapeOversized:
		b.broken(rec, "line over --max-line-bytes, not read", false, false)
	case rollout.ShapeTorn:
		b.broken(rec, "torn last line", false, true)
	case rollout.ShapeInvalid:
		b.broken(rec, "invalid JSON", false, true)
	case rollout.ShapeGlued:
		b.broken(rec, "torn bytes with a complete record glued after them (Codex skips the line)", false, true)
	case rollout.ShapeConcatenated:
		for i, part := range rec.Parts {
			sub := rollout.Record{Line: rec.Line, Offset: rec.Offset, Raw: rec.Raw[part[0]:part[1]], EOL: rec.EOL, Shape: rollout.ShapeObject}
			sub.Size = int64(len(sub.Raw))
			e := b.object(&sub)
			if e != nil {
				e.Meta = strings.TrimSpace(fmt.Sprintf("%s (object %d of %d on this line)", e.Meta, i+1, len(rec.Parts)))
			}
		}
	default:
		b.object(rec)
	}
}

// object adds a record holding one JSON object and returns its entry.
func (b *Builder) object(rec *rollout.Record) *Entry {
	if !b.seen {
		b.seen = true
		b.era = rollout.DetectEra(rec)
	}
	line, off := rec.Line, rec.Offset
	switch b.era {
	case rollout.EraFrames:
		e := &Entry{Line: line, Offset: off, Kind: "event", Title: "frame " + gjson.GetBytes(rec.Raw, "type").String(), Minor: true}
		return b.add(e)
	case rollout.EraBare:
		if rec.Get("record_type").Exists() || (len(b.all) == 0 && !rec.HasType()) {
			e := &Entry{Line: line, Offset: off, Kind: "meta", Title: "session start", Meta: rec.Get("id").String()}
			return b.add(e)
		}
		return b.item(line, off, rec.Raw, -1)
	}
	p := rec.PayloadBytes()
	switch typ := rec.Type(); typ {
	case rollout.TypeResponseItem:
		return b.item(line, off, p, -1)
	case rollout.TypeEventMsg:
		return b.event(line, off, p)
	case rollout.TypeSessionMeta:
		e := &Entry{Line: line, Offset: off, Kind: "meta", Title: "session start"}
		g := func(k string) string { return gjson.GetBytes(p, k).String() }
		e.Meta = strings.TrimSpace(g("cli_version") + " " + g("originator"))
		facts := fmt.Sprintf("id: %s\ncwd: %s\nmodel provider: %s\nsource: %s", g("id"), g("cwd"), g("model_provider"), gjson.GetBytes(p, "source").Raw)
		e.Blocks = []Block{b.block("", facts, false)}
		if bi := gjson.GetBytes(p, "base_instructions.text"); bi.Exists() {
			bl := b.block("base instructions", bi.String(), false)
			bl.Collapsed = true
			e.Blocks = append(e.Blocks, bl)
		}
		return b.add(e)
	case rollout.TypeCompacted:
		return b.compacted(line, off, p)
	case rollout.TypeTurnContext:
		e := &Entry{Line: line, Offset: off, Kind: "event", Title: "turn context", Minor: true}
		e.Meta = strings.TrimSpace(gjson.GetBytes(p, "model").String() + " " + gjson.GetBytes(p, "cwd").String())
		return b.add(e)
	case rollout.TypeWorldState:
		e := &Entry{Line: line, Offset: off, Kind: "world", Title: "world state patch"}
		if gjson.GetBytes(p, "full").Bool() {
			e.Title = "world state snapshot"
		}
		st := gjson.GetBytes(p, "state")
		e.Blocks = []Block{b.jsonBlock("this line", []byte(st.Raw), false)}
		return b.add(e)
	case rollout.TypeContextHandoff:
		g := func(k string) gjson.Result { return gjson.GetBytes(p, k) }
		e := &Entry{Line: line, Offset: off, Kind: "handoff", Title: "context handoff", Meta: g("id").String()}
		facts := fmt.Sprintf("status: %s\ntokens: %d\ndeferred: %v\ntarget turn: %s\ndelivery: %s",
			g("status").String(), g("history.tokens").Int(), g("deferred").Bool(), g("target_turn_id").String(), g("delivery.status").String())
		e.Blocks = []Block{b.block("", facts, false), b.jsonBlock("record", p, true)}
		return b.add(e)
	case rollout.TypeInterAgent:
		e := &Entry{Line: line, Offset: off, Kind: "agent", Title: "inter-agent message"}
		e.Blocks = []Block{b.jsonBlock("", p, false)}
		return b.add(e)
	default:
		e := &Entry{Line: line, Offset: off, Kind: "event", Title: typ, Minor: true}
		if typ == "" {
			e.Title, e.Minor = "record without type", false
		}
		return b.add(e)
	}
}

func (b *Builder) event(line int, off int64, p []byte) *Entry {
	g := func(k string) gjson.Result { return gjson.GetBytes(p, k) }
	typ := g("type").String()
	e := &Entry{Line: line, Offset: off, Kind: "event", Title: strings.ReplaceAll(typ, "_", " "), Minor: true}
	switch typ {
	case "task_started", "turn_started":
		b.turn = &Turn{Index: len(b.page.Turns), ID: g("turn_id").String(), Line: line}
		b.page.Turns = append(b.page.Turns, b.turn)
		e.Title = "turn started"
		if w := g("model_context_window").Int(); w > 0 {
			e.Meta = "window " + htmlpage.Group(w)
		}
	case "task_complete", "turn_complete":
		e.Title = "turn complete"
	case "turn_aborted":
		e.Title, e.Minor = "turn aborted", false
		e.Meta = g("reason").String()
	case "thread_rolled_back":
		e.Kind, e.Title, e.Minor = "rollback", "rollback", false
		e.Meta = fmt.Sprintf("%d turn(s)", g("num_turns").Int())
	case "token_count":
		if info := g("info"); info.Exists() && info.Type != gjson.Null {
			e.Meta = fmt.Sprintf("fill %s of %s", htmlpage.Group(info.Get("last_token_usage.total_tokens").Int()), htmlpage.Group(info.Get("model_context_window").Int()))
		}
	case "error", "stream_error":
		e.Kind, e.Minor = "broken", false
		e.Blocks = []Block{b.block("", g("message").String(), false)}
	default:
		if m := g("message"); m.Type == gjson.String {
			e.Meta = preview(decodeString([]byte(m.Raw), 4*previewText).s)
		}
	}
	return b.add(e)
}

// item adds a model-history item (a response_item payload or a bare line).
func (b *Builder) item(line int, off int64, raw []byte, index int) *Entry {
	e := &Entry{Line: line, Offset: off, History: true, index: index}
	f := b.describe(raw, e)
	if rollout.IsToolOutput(f.typ) && f.callID != "" {
		if call := b.calls[f.callID]; call != nil && call.Output == nil {
			call.Output = e
			b.all = append(b.all, e)
			return e
		}
	}
	if rollout.IsToolCall(f.typ) && f.callID != "" {
		b.calls[f.callID] = e
	}
	return b.add(e)
}

type fields struct {
	typ, role, id, callID, name string
	content, summary, output    []byte
	args                        []byte // arguments, input or action
	encrypted                   int
}

// describe reads an item and fills the entry's kind, title and blocks.
func (b *Builder) describe(raw []byte, e *Entry) fields {
	var f fields
	rollout.Members(raw, func(key []byte, start, end int) bool {
		v := raw[start:end]
		switch string(key) {
		case "type":
			f.typ = rollout.DecodeString(v)
		case "role":
			f.role = rollout.DecodeString(v)
		case "id":
			f.id = rollout.DecodeString(v)
		case "call_id":
			f.callID = rollout.DecodeString(v)
		case "name":
			f.name = rollout.DecodeString(v)
		case "content":
			f.content = v
		case "summary":
			f.summary = v
		case "output":
			f.output = v
		case "arguments", "input", "action":
			f.args = v
		case "encrypted_content":
			f.encrypted = len(v)
		}
		return true
	})
	e.Meta = f.id
	switch {
	case f.typ == "message":
		e.Kind, e.Title = "system", f.role
		switch f.role {
		case "user":
			e.Kind = "user"
		case "assistant":
			e.Kind = "assistant"
		}
		bl := b.blockOf("", contentText(f.content, b.decodeLimit()), false)
		bl.Collapsed = e.Kind == "system"
		e.Blocks = []Block{bl}
	case f.typ == "reasoning":
		e.Kind, e.Title = "reasoning", "reasoning"
		text := contentText(f.summary, b.decodeLimit())
		if t := contentText(f.content, b.decodeLimit()); t.size > 0 {
			text = sized{strings.TrimSpace(text.s + "\n\n" + t.s), text.size + 2 + t.size}
		}
		if f.encrypted > 0 {
			e.Meta = strings.TrimSpace(e.Meta + " encrypted " + htmlpage.Bytes(int64(f.encrypted)))
		}
		e.Blocks = []Block{b.blockOf("summary", text, false)}
	case rollout.IsToolCall(f.typ):
		e.Kind, e.Title = "tool", f.name
		if e.Title == "" {
			e.Title = f.typ
		}
		e.Meta = strings.TrimSpace(f.callID + " " + f.id)
		e.Blocks = []Block{b.codeBlock(argsText(f.args, b.decodeLimit()))}
	case rollout.IsToolOutput(f.typ):
		e.Kind, e.Title = "output", "output"
		e.Meta = strings.TrimSpace(f.callID + " " + f.id)
		e.Blocks = []Block{b.codeBlock(outputText(f.output, b.decodeLimit()))}
	default:
		e.Kind, e.Title = "item", f.typ
		if f.typ == "" {
			e.Title = "item without type"
		}
		e.Blocks = []Block{b.jsonBlock("", raw, true)}
	}
	f.callID = strings.TrimSpace(f.callID)
	e.callID = f.callID
	return f
}

func (b *Builder) compacted(line int, off int64, p []byte) *Entry {
	e := &Entry{Line: line, Offset: off, Kind: "compaction", Title: "compaction"}
	if wn := gjson.GetBytes(p, "window_number"); wn.Exists() {
		e.Meta = "window " + wn.String()
	}
	e.Blocks = []Block{b.block("summary", gjson.GetBytes(p, "message").String(), false)}
	b.compas = append(b.compas, line)
	rh := gjson.GetBytes(p, "replacement_history")
	if !rh.IsArray() {
		e.Meta = strings.TrimSpace(e.Meta + " legacy: no replacement history")
		return b.add(e)
	}
	raw := []byte(rh.Raw)
	i := 0
	rollout.Elements(raw, func(start, end int) bool {
		if len(e.Items) < b.opts.MaxItems {
			var tmp Entry
			b.describe(raw[start:end], &tmp)
			text := ""
			if len(tmp.Blocks) > 0 {
				text = preview(tmp.Blocks[0].Text)
			}
			e.Items = append(e.Items, Child{Kind: tmp.Kind, Title: tmp.Title, Text: text})
		} else {
			e.More++
		}
		i++
		return true
	})
	return b.add(e)
}

// Observe takes the flow facts the page needs from the replay.
func (b *Builder) Observe(o reconstruct.Observation) {
	last := b.lastAt(o.Pos.Line)
	switch ev := o.Evidence.(type) {
	case reconstruct.FlowRollbackEvidence:
		from := ev.FromLine
		b.spans = append(b.spans, span{from, o.Pos.Line})
		if last != nil {
			last.Blocks = append(last.Blocks, Block{Text: fmt.Sprintf("drops %v turn(s): lines %d-%d are not in the resumed history", ev.NumTurns, from, o.Pos.Line-1)})
		}
	case reconstruct.FlowWorldStateEvidence:
		if last == nil || last.Kind != "world" {
			return
		}
		switch v := ev.State; {
		case v == nil:
			last.Blocks = append(last.Blocks, Block{Text: "no world-state baseline after this line"})
		case !ev.Full:
			if b.pending != nil && b.pending != last {
				b.runPatches++ // the run goes on: its state is shown at its end
			} else {
				b.runPatches = 1
			}
			b.pending, b.pendingV = last, v
		}
	}
}

func (b *Builder) lastAt(line int) *Entry {
	for i := len(b.all) - 1; i >= 0 && b.all[i].Line == line; i-- {
		if e := b.all[i]; !e.Minor || i == len(b.all)-1 {
			return e
		}
	}
	return nil
}

// stateBudget is how many bytes of merged world states a page shows: twice
// the rollout, at least 256 KiB.
func (b *Builder) stateBudget() int { return max(2*int(b.opts.Bytes), 256<<10) }

// showState adds the merged state to the last patch of a run of patches.
func (b *Builder) showState() {
	e, v, n := b.pending, b.pendingV, b.runPatches
	b.pending, b.pendingV, b.runPatches = nil, nil, 0
	label := "merged state after this line"
	if n > 1 {
		label = fmt.Sprintf("merged state after this line (the %d patches from line %d on)", n, e.Line-n+1)
	}
	if b.stateBytes >= b.stateBudget() {
		e.Blocks = append(e.Blocks, Block{Text: fmt.Sprintf("%s: not shown, the page already shows %d bytes of merged states (rollout state FILE prints the state)", label, b.stateBytes)})
		return
	}
	text, whole := v.AppendJSONPrefix(nil, 4*b.opts.MaxText)
	b.stateBytes += len(text)
	bl := b.jsonBlock(label, text, true)
	if !whole {
		bl.Clipped = true
		b.page.Clipped++
	}
	e.Blocks = append(e.Blocks, bl)
}

// Finish marks what resume keeps, places the findings and returns the page.
func (b *Builder) Finish(st *reconstruct.State, findings []*Finding) *Page {
	if b.pending != nil {
		b.showState()
	}
	pg := &b.page
	pg.ThreadID, pg.CLIVersion, pg.Era, pg.HistoryMode, pg.Records = st.ThreadID, st.CLIVersion, string(st.Era), st.HistoryMode, st.Records
	pg.FirstWindowID, pg.WindowID, pg.WindowNumber = st.Lineage.FirstWindowID, st.Lineage.WindowID, st.Lineage.WindowNumber
	type key struct{ line, index int }
	pg.Live, pg.Shown = st.History.Len(), len(b.all)
	live := make(map[key]bool, st.History.Len())
	for _, s := range st.Segments {
		pg.Inherits = append(pg.Inherits, Inherit{RolloutID: s.RolloutID, Path: s.Path, EndOffset: s.End})
	}
	for it := range st.History.All() {
		if it.Segment > 0 {
			// A record of a rollout the thread continues: not on the page.
			pg.Inherits[it.Segment-1].Items++
			pg.Inherited++
			continue
		}
		live[key{it.Line, it.Index}] = true
	}
	replaced := map[int][]int{} // compaction line -> lines it replaced
	prev := 0
	for _, e := range b.all {
		e.Anchor, prev = e.Line != prev, e.Line
		switch {
		case e.History:
			if live[key{e.Line, e.index}] {
				continue
			}
			pg.Gone++
			e.Gone = b.why(e.Line)
			if c := b.compactionAfter(e.Line); c > 0 && b.rolledBackBy(e.Line) == 0 {
				replaced[c] = append(replaced[c], e.Line)
			}
		case e.Kind == "compaction":
			for i := range e.Items {
				e.Items[i].Gone = !live[key{e.Line, i}]
				if e.Items[i].Gone {
					pg.Gone++
				}
			}
			if at := b.rolledBackBy(e.Line); at > 0 {
				e.Gone = fmt.Sprintf("dropped by the rollback at line %d", at)
			}
		default:
			if at := b.rolledBackBy(e.Line); at > 0 {
				e.Gone = fmt.Sprintf("dropped by the rollback at line %d", at)
			}
		}
	}
	for _, e := range b.all {
		if e.Kind == "compaction" {
			if ls := replaced[e.Line]; len(ls) > 0 {
				e.Blocks = append(e.Blocks, Block{Text: fmt.Sprintf("replaces %d earlier history item(s), lines %d-%d, with the %d item(s) below", len(ls), ls[0], ls[len(ls)-1], len(e.Items)+e.More)})
			}
		}
	}
	byStart := map[int]reconstruct.Turn{}
	for _, t := range st.Turns {
		if t.Segment <= 0 {
			byStart[t.StartLine] = t
		}
	}
	for _, t := range pg.Turns[1:] {
		if s, ok := byStart[t.Line]; ok {
			t.Status, t.RolledBack = s.Status, s.RolledBack
		}
	}
	if len(pg.Turns[0].Records) == 0 {
		pg.Turns = pg.Turns[1:]
	}
	b.place(findings)
	return pg
}

func (b *Builder) why(line int) string {
	if at := b.rolledBackBy(line); at > 0 {
		return fmt.Sprintf("dropped by the rollback at line %d", at)
	}
	if c := b.compactionAfter(line); c > 0 {
		return fmt.Sprintf("replaced by the compaction at line %d", c)
	}
	return "not in the resumed history"
}

// rolledBackBy is the line of the rollback that dropped a line, or 0.
func (b *Builder) rolledBackBy(line int) int {
	for _, s := range b.spans {
		if line >= s.from && line < s.at {
			return s.at
		}
	}
	return 0
}

// compactionAfter is the first compaction after a line, or 0.
func (b *Builder) compactionAfter(line int) int {
	i := sort.SearchInts(b.compas, line+1)
	if i < len(b.compas) {
		return b.compas[i]
	}
	return 0
}

// place puts each finding at the first record of its line.
func (b *Builder) place(findings []*Finding) {
	pg := &b.page
	counts := map[string]*RuleCount{}
	at := map[int][]*Finding{}
	for i, f := range findings {
		f.N = i + 1
		pg.Findings = append(pg.Findings, f)
		switch f.Severity {
		case checks.Error:
			pg.Errors++
		case checks.Warning:
			pg.Warnings++
		case checks.Info:
			pg.Infos++
		}
		rc := counts[f.Rule]
		if rc == nil {
			rc = &RuleCount{Rule: f.Rule, Severity: f.Severity.String()}
			counts[f.Rule] = rc
		}
		rc.Count++
		at[f.Line] = append(at[f.Line], f)
	}
	for _, e := range b.all {
		for l := e.Line; l <= max(e.Line, e.LastLine) && len(at) > 0; l++ {
			if fs, ok := at[l]; ok {
				e.Findings = append(e.Findings, fs...)
				delete(at, l)
			}
		}
	}
	for _, f := range findings {
		if _, ok := at[f.Line]; ok {
			pg.Unplaced = append(pg.Unplaced, f)
		}
	}
	for _, rc := range counts {
		pg.ByRule = append(pg.ByRule, *rc)
	}
	sort.Slice(pg.ByRule, func(i, j int) bool { return pg.ByRule[i].Rule < pg.ByRule[j].Rule })
}

// block clips a text for the page.
func (b *Builder) block(label, text string, code bool) Block {
	return b.blockOf(label, sized{text, int64(len(text))}, code)
}

// blockOf clips a text that may have been decoded only in part.
func (b *Builder) blockOf(label string, t sized, code bool) Block {
	text := t.s
	bl := Block{Label: label, Code: code, Size: max(t.size, int64(len(text)))}
	limit := b.opts.MaxText
	if left := b.opts.MaxTotalText - b.kept; left < int64(limit) {
		limit = int(max(left, 0))
	}
	bl.Text, bl.Clipped = clip(text, limit)
	bl.Clipped = bl.Clipped || bl.Size > int64(len(bl.Text))
	b.kept += int64(len(bl.Text))
	if bl.Clipped {
		b.page.Clipped++
	}
	return bl
}

// decodeLimit is how much of a string is decoded: a little more than the
// page keeps, so that clip decides where to cut.
func (b *Builder) decodeLimit() int { return b.opts.MaxText + 8 }

// codeBlock is a tool call's or output's text, collapsed when long.
func (b *Builder) codeBlock(t sized) Block {
	bl := b.blockOf("", t, true)
	if bl.Size > collapseAt || strings.Count(bl.Text, "\n") > 12 {
		bl.Collapsed = true
	}
	return bl
}

// jsonBlock shows raw JSON indented (when it fits the page) and clipped.
func (b *Builder) jsonBlock(label string, raw []byte, collapsed bool) Block {
	text := string(raw)
	if len(raw) <= 4*b.opts.MaxText {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") == nil {
			text = buf.String()
		}
	}
	bl := b.block(label, text, true)
	if collapsed {
		bl.Collapsed = true
	}
	return bl
}

// clip cuts s to at most n bytes at a rune boundary, making it valid UTF-8.
func clip(s string, n int) (string, bool) {
	cut := len(s) > n
	if cut {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = strings.Clone(s[:i]) // never keep the whole string alive
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, cut
}

func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if t, cut := clip(s, previewText); cut {
		return t + "…"
	}
	return s
}

// sized is a text decoded from JSON, perhaps only in part, and the size
// in bytes of all of it.
type sized struct {
	s    string
	size int64
}

// decodeString decodes a raw JSON string, at most about limit bytes of it:
// a tool output of megabytes is scanned for its size, never copied whole.
func decodeString(v []byte, limit int) sized {
	if len(v) < 2 || v[0] != '"' {
		return sized{}
	}
	if len(v) <= limit+2 {
		s := rollout.DecodeString(v)
		return sized{s, int64(len(s))}
	}
	body := v[1 : len(v)-1]
	var size int64
	cut := -1
	for i := 0; i < len(body); {
		if cut < 0 && size >= int64(limit) && utf8.RuneStart(body[i]) {
			cut = i // at a character or escape boundary
		}
		switch {
		case body[i] != '\\' || i+1 >= len(body):
			size++
			i++
		case body[i+1] == 'u' && i+6 <= len(body):
			r, _ := strconv.ParseUint(string(body[i+2:i+6]), 16, 32)
			switch {
			case r >= 0xD800 && r < 0xDC00 && i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u':
				size += 4 // a surrogate pair, kept whole
				i += 12
			case r >= 0xD800 && r < 0xE000:
				size += 3 // a lone surrogate decodes as U+FFFD
				i += 6
			default:
				size += int64(utf8.RuneLen(rune(r)))
				i += 6
			}
		default:
			size++
			i += 2
		}
	}
	if cut < 0 {
		cut = len(body)
	}
	quoted := make([]byte, 0, cut+2)
	quoted = append(append(append(quoted, '"'), body[:cut]...), '"')
	return sized{rollout.DecodeString(quoted), size}
}

// contentText joins the texts of a content or summary array (or a plain
// string); images and other parts show as their type and size.
func contentText(raw []byte, limit int) sized {
	if len(raw) == 0 {
		return sized{}
	}
	if raw[0] == '"' {
		return decodeString(raw, limit)
	}
	if raw[0] != '[' {
		return sized{}
	}
	var parts []string
	var size int64
	add := func(t sized) {
		if len(parts) > 0 {
			size++ // the newline between parts
		}
		size += t.size
		parts = append(parts, t.s)
	}
	rollout.Elements(raw, func(start, end int) bool {
		el := raw[start:end]
		left := max(limit-int(size), 0)
		var typ string
		var text, image []byte
		rollout.Members(el, func(key []byte, s, e int) bool {
			switch string(key) {
			case "type":
				typ = rollout.DecodeString(el[s:e])
			case "text":
				text = el[s:e]
			case "image_url":
				image = el[s:e]
			}
			return true
		})
		switch {
		case image != nil:
			t := fmt.Sprintf("[image, %s]", htmlpage.Bytes(int64(len(image))))
			add(sized{t, int64(len(t))})
		case text != nil || strings.HasSuffix(typ, "text"):
			add(decodeString(text, left))
		case el[0] == '"':
			add(decodeString(el, left))
		default:
			t := "[" + typ + "]"
			add(sized{t, int64(len(t))})
		}
		return true
	})
	return sized{strings.Join(parts, "\n"), size}
}

// argsText is a tool call's arguments: a JSON string holding JSON is
// shown decoded and indented, other values as they are.
func argsText(raw []byte, limit int) sized {
	if len(raw) == 0 {
		return sized{}
	}
	if raw[0] != '"' {
		return sized{string(raw[:min(len(raw), limit)]), int64(len(raw))}
	}
	t := decodeString(raw, limit)
	if t.size == int64(len(t.s)) && json.Valid([]byte(t.s)) {
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(t.s), "", "  ") == nil {
			return sized{buf.String(), int64(buf.Len())}
		}
	}
	return t
}

// outputText is a tool output: a string, an object with content or
// output, or an array of content items.
func outputText(raw []byte, limit int) sized {
	if len(raw) == 0 {
		return sized{}
	}
	switch raw[0] {
	case '"', '[':
		return contentText(raw, limit)
	case '{':
		var inner []byte
		rollout.Members(raw, func(key []byte, s, e int) bool {
			switch string(key) {
			case "content", "output", "body":
				if inner == nil {
					inner = raw[s:e]
				}
			}
			return true
		})
		if inner != nil {
			return contentText(inner, limit)
		}
	}
	return sized{string(raw[:min(len(raw), limit)]), int64(len(raw))}
}

// Input keeps what Codex sends on resume for the page (each item's JSON
// clipped like any text of the page), or, when err is set, why it is not
// shown.
func (b *Builder) Input(st *reconstruct.State, items []resumeinput.Item, err error) {
	b.page.ResumeVersion = st.ResumeVersion()
	if err != nil {
		b.page.InputNote = "What Codex sends is not shown: " + err.Error()
		return
	}
	for _, it := range items {
		title := gjson.GetBytes(it.Raw, "type").String()
		if role := gjson.GetBytes(it.Raw, "role").String(); role != "" {
			title += " · " + role
		} else if name := gjson.GetBytes(it.Raw, "name").String(); name != "" {
			title += " · " + name
		}
		in := InputItem{Title: title, Block: b.jsonBlock("", it.Raw, true)}
		if it.From.Segment == 0 {
			in.Line = it.From.Line
		}
		switch {
		case it.Unmodelled != "":
			in.Made = "not modelled: what Codex sends for a record of type " + it.Unmodelled + " (its payload is shown)"
		case it.From.Index == reconstruct.SummaryIndex:
			in.Made = "made by Codex from the compaction's summary"
		case it.From.Index == reconstruct.BridgeIndex:
			in.Made = "made by Codex from the compaction's summary and the prompts before it"
		case it.From.Index == reconstruct.AbortedIndex:
			in.Made = "made by Codex for the call at this line, which has no output"
		}
		b.page.Input = append(b.page.Input, in)
	}
}
