package reconstruct

import (
	"hash/maphash"
	"io"
	"strconv"
	"strings"
	"time"
	"unique"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/reconstruct/frames"
	"github.com/rollout-dev/rollout/rollout"
)

// Options configure an engine.
type Options struct {
	// Path is the file's path, used to compare the thread id in its name.
	Path string
	// HandoffCap is the cap of the handoff budget (0: DefaultHandoffCap).
	HandoffCap int64
	// MigrationLimit is the largest record Codex's legacy-to-paginated
	// migration keeps (0: DefaultMigrationLimit; tests lower it).
	MigrationLimit int64
	// Now is the time the file is judged at: how long ago its last record
	// was written tells a live session from one that died (zero: unknown).
	Now time.Time
	// ReplayGlued replays the complete records of a glued line (torn bytes,
	// then records), which Codex skips with the line: repair plans with
	// them, since cutting the torn bytes off restores them.
	ReplayGlued bool
	// HashItems hashes the content of every item with an id as it passes,
	// for comparing whole states (reclaim's proof). Otherwise an item of a
	// file that can be read again is hashed only if its id comes again.
	HashItems bool
	// ResumeVersion is the Codex version that is to resume the file (""
	// for the writer's, session_meta's cli_version): what it drops,
	// inserts and replays decides the state (`rollout state
	// --codex-version`).
	ResumeVersion string
}

// engine replays one rollout; Replay drives it: every record in order,
// then Finish once.
type engine struct {
	opts Options
	obs  Observer
	st   State

	records          int
	unreadBeforeMeta bool // an oversized line came before any session_meta
	firstLine        int  // line of the first object record
	firstOffset      int64
	metaSeen         bool
	forkAllowed      bool
	pendingNoOrd     *Pos // the latest line without ordinal, not yet known to be last
	lastOrd          *int64
	lastOrdLine      int    // the line of lastOrd
	lastOrdSum       uint64 // of that line's type and payload; 0 when not summed
	reemitted        int
	firstReemitted   Pos
	ordInLegacy      int
	firstOrdInLegacy Pos
	sinceWS          bool // model-visible history since the last world_state line
	afterCompact     bool
	lastTotal        *usage
	ownTokens        bool // st.Tokens is held by nothing else: changed in place (mutableTokens)
	skipDecrease     bool
	// threadCounter: the file carries token_usage_record lines, whose
	// thread_token_usage is the cumulative counter (tokens.go).
	threadCounter      bool
	lastThread         *int64
	skipThreadDecrease bool
	contextTurnID      string        // turn_id of a turn_context seen outside an open turn with events (turns.go)
	whole              bool          // the record being fed is a whole line (not an object of a concatenated or glued one)
	prevItem           prevLine      // the last whole response_item line (items.go)
	rhCompactions      int           // compactions with a replacement_history so far
	compactedRollbacks []Observation // rollbacks of compacted turns, until a later compaction (turns.go)
	tail               *unknownTail  // records at the end the file's Codex version cannot read (tail.go)
	lastReadOrd        *int64        // ordinal of the last record it can read
	missingIDs         missingIDs    // held until the end: whether the file uses ids is known then
	failClosed         bool          // an unknown history mode: only line and envelope checks run
	overLimit          []Observation // records the paginated migration would drop, judged at the end (history mode)
	anchorWanted       bool          // a line whose time does not parse awaits the next valid one
	orphanOutputs      []Observation // held until the end: the file's Codex version is known then
	lastTime           time.Time     // timestamp of the last record that has a valid one
	turnEvents         bool          // a task_started was seen: turns come from events, not user messages
	prompts            promptTracker // the prompts and user input items of the open turn (prompts.go)
	promptVerdicts     []promptVerdict
	lastPrompt         string       // key of the latest user message of the live history
	emptyCompaction    *Observation // the newest compaction, when its replacement_history is empty
	turn               *turnState   // the open turn, nil outside turns
	turns              []*turnState
	types              *typeTable // item types of every History of this replay
	calls              textIndex  // live call_id -> index into st.History
	outputs            textIndex  // live output call_id -> index of its first output
	// pending are the unanswered calls of each call_id, in order: an
	// output answers the latest, so an output inserted right after a call
	// (repair's aborted output) answers that call even when the id is
	// reused.
	pending map[string][]int
	ids     textIndex      // live item id -> index of its first item in st.History
	hof     handoffTracker // handoff.go
	frames  *frames.Replay // frame logs (frames.md)
	// reread reads the file again by offset (nil: it cannot be, stdin or
	// zstd): with it, items are hashed only when their id comes again.
	reread io.ReaderAt

	// Lineages (lineage.go).
	seg             int        // the segment being fed (0: the file itself)
	inheritedPrefix bool       // the segments of the file's history_base were replayed
	prefixUnknown   bool       // the file continues a prefix that was not replayed
	pendingLineage  []Evidence // reported at the file's session_meta
	subStart        int64      // subagent_history_start_ordinal (-1: none)
	subOwn          bool       // a record at or past subStart was seen

	foreign foreignRun  // records of another rollout (foreign.go)
	metaID  metaIDCheck // a file name that disagrees with session_meta (metaid.go)
}

// newEngine starts an engine that reports to obs (which may be nil).
func newEngine(opts Options, obs Observer) *engine {
	if obs == nil {
		obs = func(Observation) {}
	}
	e := &engine{opts: opts, types: newTypeTable(), calls: textIndex{call: true}, outputs: textIndex{call: true}, pending: map[string][]int{}, subStart: -1}
	e.obs = func(o Observation) {
		if e.keep(o) {
			obs(o)
		}
	}
	e.st.ResumeAs = opts.ResumeVersion
	e.st.History = newHistory(e.types)
	e.st.Era = rollout.EraUnknown
	e.st.Handoffs = map[string]*Handoff{}
	e.frames = frames.NewReplay(frames.Options{Lines: true}, e.frameEvent)
	return e
}

func (e *engine) emit(p Pos, ev Evidence) {
	e.obs(Observation{Pos: p, Evidence: ev})
}

// Feed replays one record.
func (e *engine) Feed(rec *rollout.Record) {
	e.records++
	e.st.Records++
	e.frames.Line(rec) // bookkeeping only, until the log proves to be a frame log
	pos := Pos{Line: rec.Line, Offset: rec.Offset, Segment: e.seg}
	if rollout.IsCRLF(rec.EOL) {
		e.emit(pos, LineCRLFEvidence{})
	}
	if rec.InvalidUTF8 {
		e.emit(pos, LineInvalidUTF8Evidence{})
	}
	if rec.DuplicateKeyCount > 0 && rec.Type() != rollout.TypeWorldState {
		e.emit(pos, LineDuplicateKeyEvidence{Keys: rec.DuplicateKeys, Count: rec.DuplicateKeyCount})
	}
	if rec.LoneSurrogate {
		e.emit(pos, LineLoneSurrogateEvidence{})
	}
	if rec.ControlChar {
		e.emit(pos, LineControlCharEvidence{})
	}
	switch rec.Shape {
	case rollout.ShapeBlank:
		e.emit(pos, LineBlankEvidence{})
		return
	case rollout.ShapeOversized:
		// The unread line may be the session_meta: do not claim it is missing.
		e.unreadBeforeMeta = e.unreadBeforeMeta || !e.metaSeen
		e.st.Unread++
		e.emit(pos, LineOversizedEvidence{Bytes: rec.Size})
		e.prompts.unread = true
		e.noteSize(rec, pos, "")
		// Unread, so its ordinal is unknown: assume Codex numbered it
		// and can read it.
		if e.lastOrd != nil {
			*e.lastOrd++
			e.lastOrdSum = 0 // a record nobody read: no copy of it is known
		}
		e.tail = nil
		return
	case rollout.ShapeTorn:
		e.emit(pos, LineTornTailEvidence{Bytes: rec.Size, CLIVersion: e.st.ResumeVersion()})
		return
	case rollout.ShapeGlued:
		// Codex parses lines whole and skips this one, the intact records
		// too: resume has none of them. Repair's analysis replays them
		// (Options.ReplayGlued): cutting the torn bytes off restores them.
		if rec.BOM {
			e.emit(pos, LineBOMEvidence{Record: gluedTypes(rec)[0]})
		} else {
			e.emit(pos, LineGluedEvidence{TornBytes: int64(rec.Parts[0][0]), Records: gluedTypes(rec)})
		}
		if !e.opts.ReplayGlued {
			return
		}
		for _, part := range rec.Parts {
			sub := rollout.Record{Line: rec.Line, Offset: rec.Offset, Raw: rec.Raw[part[0]:part[1]], EOL: rec.EOL, Shape: rollout.ShapeObject}
			sub.Size = int64(len(sub.Raw))
			e.feedObject(&sub, pos)
		}
		return
	case rollout.ShapeInvalid:
		// Resume skips unparseable lines when it looks for the last ordinal,
		// so they are not judged for ordinals either.
		e.emit(pos, LineInvalidJSONEvidence{Type: cutType(rec.Raw), FirstLine: rec.Line == 1})
		return
	case rollout.ShapeConcatenated:
		e.emit(pos, LineConcatenatedEvidence{Objects: len(rec.Parts)})
		for _, part := range rec.Parts {
			sub := rollout.Record{Line: rec.Line, Offset: rec.Offset, Raw: rec.Raw[part[0]:part[1]], EOL: rec.EOL, Shape: rollout.ShapeObject}
			sub.Size = int64(len(sub.Raw))
			e.feedObject(&sub, pos)
		}
		return
	}
	e.whole = true
	e.feedObject(rec, pos)
	e.whole = false
}

func (e *engine) feedObject(rec *rollout.Record, pos Pos) {
	if e.firstLine == 0 {
		e.firstLine, e.firstOffset = rec.Line, rec.Offset
		e.st.Era = rollout.DetectEra(rec)
	}
	if e.st.Era == rollout.EraFrames {
		e.frames.Feed(rec.Raw)
		return
	}
	if e.st.Era == rollout.EraBare {
		e.feedBare(rec, pos)
		return
	}
	typ := rec.Type()
	e.noteSize(rec, pos, typ)
	ord, hasOrd := rec.Ordinal()
	if hasOrd {
		o := ord // escapes: allocated only for a line with an ordinal
		pos.Ordinal = &o
	}
	if typ == rollout.TypeSessionMeta && !e.metaSeen {
		e.st.OrdinalBase = ordinalBase(rec.MetaPayload())
	}
	if e.subStart >= 0 && hasOrd && e.metaSeen && pos.Segment == 0 {
		switch {
		case ord < e.subStart:
			pos.Segment = InheritedRecord
		case !e.subOwn:
			e.subOwn = true
			e.startOwnCounters()
		}
	}
	e.noteMetaID(rec, typ)
	if !e.failClosed {
		e.noteForeign(rec, pos)
		e.checkOrdinal(pos, hasOrd, rec)
	}

	// RolloutLine (codex-rs/protocol/src/protocol.rs) has a required
	// `timestamp: String` next to the flattened item: a line without one,
	// or with a non-string one, does not deserialize and is lost on resume.
	missing := ""
	ts := rec.Timestamp()
	switch {
	case !rec.HasType():
		missing = "type"
	case rec.PayloadBytes() == nil:
		missing = "payload"
	case ts == nil:
		missing = "timestamp"
	case ts[0] != '"':
		missing = "timestamp"
	}
	if missing != "" {
		ev := EnvelopeMissingFieldEvidence{Field: missing}
		if ts != nil && missing == "timestamp" {
			ev.Value = string(ts)
		}
		e.emit(pos, ev)
		return
	}
	if t, ok := parseTimestamp(ts); !ok {
		e.emit(pos, EnvelopeBadTimestampEvidence{Value: string(ts)})
		e.timeAnchor(pos, ts)
	} else {
		e.noteTime(t)
	}
	if !e.failClosed {
		e.noteTail(pos, typ, ord, hasOrd)
	}
	if e.failClosed && typ != rollout.TypeSessionMeta {
		// An unknown history mode: the line and its envelope were judged,
		// nothing is replayed.
		if !rollout.KnownLineType(typ) {
			e.st.UnknownTypes++
			e.emit(pos, EnvelopeUnknownTypeEvidence{Type: typ})
		}
		return
	}
	if typ == rollout.TypeResponseItem {
		// The hot path: payloads of megabytes are walked, never copied.
		e.addLiveItem(pos, rec.PayloadBytes(), rec, -1)
		return
	}
	if typ == rollout.TypeEventMsg {
		e.event(rec, pos) // user_message events carry images: walked, not copied
		return
	}
	if typ == rollout.TypeWorldState {
		e.worldState(pos, rec)
		return
	}
	if typ == rollout.TypeSessionMeta {
		e.sessionMeta(rec, pos, rec.MetaPayload())
		return
	}
	if typ == rollout.TypeTurnContext {
		e.turnContext(pos, rec) // one a turn: read from the noted members, not copied
		return
	}
	payload := rec.Payload()

	switch typ {
	case rollout.TypeCompacted:
		e.compacted(rec, pos, payload)
	case rollout.TypeTokenUsageRecord:
		e.tokenUsageRecord(pos, payload)
	case rollout.TypeInterAgent:
		e.interAgent(rec, pos, payload)
	case rollout.TypeContextHandoff:
		e.handoff(rec, pos, payload)
	case rollout.TypeDynamicToolsUpdated:
		e.dynamicToolsUpdated(pos, payload)
	case rollout.TypeIDAllocation:
		e.idAllocation(pos, payload)
	default:
		if !rollout.KnownLineType(typ) {
			e.st.UnknownTypes++
			e.emit(pos, EnvelopeUnknownTypeEvidence{Type: typ})
		}
	}
}

// noteLine tracks the last line for the ordinal-on-last-line rule.
func (e *engine) noteLine(pos Pos, hasOrdinal bool) {
	if e.pendingNoOrd != nil {
		e.emit(*e.pendingNoOrd, OrdinalMissingEvidence{})
		e.pendingNoOrd = nil
	}
	if !hasOrdinal && e.st.HistoryMode == rollout.HistoryPaginated {
		p := pos
		e.pendingNoOrd = &p
	}
}

func (e *engine) checkOrdinal(pos Pos, has bool, rec *rollout.Record) {
	e.noteLine(pos, has)
	if !has {
		return
	}
	got := *pos.Ordinal
	if e.st.HistoryMode != rollout.HistoryPaginated && e.metaSeen {
		e.ordInLegacy++
		if e.ordInLegacy == 1 {
			e.firstOrdInLegacy = pos // reported at the end, with the count
		}
		return
	}
	sum := recordSum(rec)
	if e.lastOrd != nil {
		prev := *e.lastOrd
		switch {
		case got == prev:
			e.emit(pos, OrdinalDuplicateEvidence{Ordinal: got, FirstLine: e.lastOrdLine, Copy: sum != 0 && sum == e.lastOrdSum})
		case got < prev:
			e.emit(pos, OrdinalBackwardsEvidence{Previous: prev, Got: got})
		case got > prev+1:
			e.emit(pos, OrdinalGapEvidence{Want: prev + 1, Got: got})
		}
	} else if got != e.st.OrdinalBase {
		e.emit(pos, OrdinalGapEvidence{Want: e.st.OrdinalBase, Got: got})
	}
	setLast(&e.lastOrd, got)
	e.lastOrdLine, e.lastOrdSum = pos.Line, sum
}

// maxSummedPayload bounds the records recordSum hashes: the copies that
// stall a projection are small event records (openai/codex#41079: two
// thread_settings_applied), and hashing every image would cost a pass.
const maxSummedPayload = 16 << 10

// recordSum identifies a record by its type and payload (not its
// timestamp): two records with one ordinal and one sum are one record
// written twice. 0: not summed.
func recordSum(rec *rollout.Record) uint64 {
	payload := rec.PayloadBytes()
	if payload == nil || len(payload) > maxSummedPayload {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(hashSeed)
	h.WriteString(rec.Type())
	h.WriteByte(0)
	h.Write(payload)
	return h.Sum64() | 1
}

// setLast sets the value *p points to, allocating it only the first time:
// the engine's last-seen counters are its own (never shared, copied by
// clone), and a line of a paginated file carries an ordinal each.
func setLast[T any](p **T, v T) {
	if *p == nil {
		*p = new(T)
	}
	**p = v
}

// ordinalBase is the ordinal a paginated rollout starts from: a fork or a
// revert continues its prefix file's numbering from
// history_base.end_ordinal_exclusive (RolloutOrdinalState::for_new_rollout,
// codex-rs/rollout/src/ordinal.rs; HistoryPosition in
// codex-rs/protocol/src/protocol.rs), any other rollout from 0.
func ordinalBase(meta gjson.Result) int64 {
	v := meta.Get("history_base.end_ordinal_exclusive")
	if v.Type != gjson.Number {
		return 0
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// skippedWhenFailClosed names the checks that need the replay and so do not
// run on a file whose history mode is unknown.
var skippedWhenFailClosed = []string{"ordinal", "item", "tool", "turn", "rollback", "worldstate", "compaction", "agentcomm", "tokens", "handoff", "line/over-migration-limit"}

// noteTime remembers the write time of the latest record.
func (e *engine) noteTime(t time.Time) {
	if t.After(e.lastTime) {
		e.lastTime = t
	}
	if e.anchorWanted {
		e.anchorWanted = false
		e.emit(Pos{}, FlowTimeAnchorEvidence{After: t.UnixMilli()})
	}
}

// timeAnchor reports a line whose timestamp does not parse, with the time
// of the record before it, so that what repair derives from the line's time
// (UUIDv7 ids) uses the nearest real time instead of zero.
func (e *engine) timeAnchor(pos Pos, raw []byte) {
	if s, _ := rollout.StringValue(raw); len(s) > 0 {
		if _, err := time.Parse(time.RFC3339Nano, string(s)); err == nil {
			return // not Codex's form, but a time all the same
		}
	}
	var before int64
	if !e.lastTime.IsZero() {
		before = e.lastTime.UnixMilli()
	}
	e.anchorWanted = true
	e.emit(pos, FlowTimeAnchorEvidence{Before: before})
}

// idleSeconds is how long before Now the last record was written; -1 when
// either is unknown.
func (e *engine) idleSeconds() int64 {
	if e.opts.Now.IsZero() || e.lastTime.IsZero() {
		return -1
	}
	return int64(e.opts.Now.Sub(e.lastTime) / time.Second)
}

// parseTimestamp accepts RFC 3339 in UTC ("Z"), parsed once per line: on
// short lines a second parse was a tenth of verify's time.
func parseTimestamp(raw []byte) (time.Time, bool) {
	s, ok := rollout.StringValue(raw)
	if !ok || len(s) == 0 || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	if t, ok := parseMillisZ(s); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	return t, err == nil
}

var daysIn = [12]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// parseMillisZ parses the form Codex writes, "2026-03-10T09:35:30.037Z",
// without time.Parse's generality (and its string copy): a fifth of
// verify's engine time on small records. Anything else, and any value out
// of range, is left to time.Parse (ok false), which decides.
func parseMillisZ(s []byte) (time.Time, bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	digits := true
	d2 := func(i int) int {
		a, b := s[i]-'0', s[i+1]-'0' // a byte below '0' wraps past 9
		digits = digits && a <= 9 && b <= 9
		return int(a)*10 + int(b)
	}
	y := d2(0)*100 + d2(2)
	mo, d, h, mi, sec := d2(5), d2(8), d2(11), d2(14), d2(17)
	ms := d2(20)*10 + int(s[22]-'0')
	if !digits || s[22]-'0' > 9 || y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false // year 0 too: time.Parse decides
	}
	if dim := daysIn[mo-1]; d > dim && !(mo == 2 && d == 29 && y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		return time.Time{}, false
	}
	// Days since 1970-01-01 of the civil date (H. Hinnant's days_from_civil).
	if mo <= 2 {
		y--
	}
	era := y / 400 // y >= 0 here
	yoe := y - era*400
	mp := (mo + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := int64(era)*146097 + int64(doe) - 719468
	unix := days*86400 + int64(h*3600+mi*60+sec)
	return time.Unix(unix, int64(ms)*1e6).UTC(), true
}

func (e *engine) sessionMeta(rec *rollout.Record, pos Pos, p gjson.Result) {
	// One walk of the payload for the members read here.
	f := rollout.ResultMembers(p, "id", "cli_version", "source", "timestamp", "parent_thread_id", "forked_from_id", "context_window")
	id, cli, src, started, parent, forked, window := f[0], f[1], f[2], f[3], f[4], f[5], f[6]
	if e.metaSeen {
		if !e.forkAllowed {
			e.emit(pos, MetaUnexpectedExtraEvidence{ID: id.String()})
		}
		// A fork replays its parent: its token counters start over.
		e.lastTotal, e.lastThread = nil, nil
		return
	}
	e.metaSeen = true
	e.st.MetaLine = rec.Line
	meta := rec.Meta()
	e.subStart = meta.SubagentStart
	e.lineageAtMeta(pos, meta.Base != nil)
	if rec.Line != e.firstLine {
		e.emit(pos, MetaNotFirstEvidence{FirstLine: e.firstLine})
	}
	// The state keeps its own copies of the strings of the payload, so that
	// a caller holding states (a fleet's evidence, the prefix memo) does not
	// hold every session_meta's text.
	e.st.ThreadID = strings.Clone(id.String())
	e.st.CLIVersion = unique.Make(cli.String()).Value()
	if newer, _ := Unchecked(e.st.CLIVersion); newer {
		e.emit(pos, MetaUncheckedVersionEvidence{CLIVersion: e.st.CLIVersion,
			CheckedOldest: CheckedOldest.String(), CheckedThrough: CheckedNewest.String()})
	}
	e.st.HistoryMode = meta.HistoryMode
	if e.st.HistoryMode != rollout.HistoryLegacy && e.st.HistoryMode != rollout.HistoryPaginated {
		// Fail closed: replaying with the wrong rules would report false
		// faults and plan wrong fixes. Line and envelope checks still run.
		e.failClosed = true
		e.emit(pos, MetaUnknownHistoryModeEvidence{Value: e.st.HistoryMode, Skipped: skippedWhenFailClosed})
	}
	if e.st.HistoryMode == rollout.HistoryPaginated && !pos.hasOrdinal() && e.pendingNoOrd == nil {
		// history_mode is only known now: judge this very line too.
		pp := pos
		e.pendingNoOrd = &pp
	}
	e.dynamicTools(DynamicToolsFromMeta, pos, metaDynamicTools(rec))
	e.st.StartedAt = strings.Clone(started.String())
	if e.st.StartedAt == "" {
		if ts, ok := rollout.StringValue(rec.Timestamp()); ok {
			e.st.StartedAt = string(ts)
		}
	}
	// Codex's SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
	// parent_thread_id, .. }) serializes as source.subagent.thread_spawn;
	// newer metas also carry parent_thread_id at the top level.
	e.st.ParentThreadID = strings.Clone(src.Get("subagent.thread_spawn.parent_thread_id").String())
	if e.st.ParentThreadID == "" {
		e.st.ParentThreadID = strings.Clone(parent.String())
	}
	e.forkAllowed = forked.Exists() || parent.Exists() ||
		(src.IsObject() && src.Get("subagent").Exists())
	// The first context window is the one every compaction names as first_window_id.
	e.st.Lineage.WindowID = strings.Clone(window.Get("window_id").String())
	e.st.Lineage.FirstWindowID = e.st.Lineage.WindowID
	if id, ok := rollout.ThreadIDFromName(e.opts.Path); ok && e.st.ThreadID != "" && !strings.EqualFold(id, e.st.ThreadID) {
		e.metaID = metaIDCheck{pos: pos, ev: MetaFilenameMismatchEvidence{FileID: id, PayloadID: e.st.ThreadID}, pending: true,
			fileLow: strings.ToLower(id), metaLow: strings.ToLower(e.st.ThreadID)}
	}
}

func (p Pos) hasOrdinal() bool { return p.Ordinal != nil }

// gluedTypes names the records glued to a torn line: "type" or
// "type/payload.type" each.
func gluedTypes(rec *rollout.Record) []string {
	out := make([]string, 0, len(rec.Parts))
	for _, part := range rec.Parts {
		sub := rollout.Record{Raw: rec.Raw[part[0]:part[1]], Shape: rollout.ShapeObject}
		name := sub.Type()
		if t := sub.Payload().Get("type").String(); t != "" {
			name += "/" + t
		}
		out = append(out, name)
	}
	return out
}

func (e *engine) feedBare(rec *rollout.Record, pos Pos) {
	if rec.Get("record_type").Exists() {
		return
	}
	if !e.metaSeen && rec.Line == e.firstLine {
		e.metaSeen = true
		e.st.MetaLine = rec.Line
		e.st.ThreadID = rec.Get("id").String()
		e.st.HistoryMode = rollout.HistoryLegacy
		return
	}
	if !rec.HasType() {
		e.emit(pos, EnvelopeMissingFieldEvidence{Field: "type"})
		return
	}
	e.addLiveItem(pos, rec.Raw, nil, -1)
}

// Finish ends the replay: it reports what is only known at the end of the
// file and returns the reconstructed state. Call it once.
func (e *engine) Finish() *State {
	e.endForeign()
	e.finishMetaID()
	if e.emptyCompaction != nil {
		e.obs(*e.emptyCompaction)
		e.emptyCompaction = nil
	}
	if e.pendingNoOrd != nil {
		e.emit(*e.pendingNoOrd, OrdinalLastMissingEvidence{})
		e.pendingNoOrd = nil
	}
	if e.st.Era == rollout.EraFrames {
		e.frames.Finish() // a frame log has no session_meta
	} else if !e.metaSeen && !e.unreadBeforeMeta {
		// An empty file is reported too: Codex writes session_meta first,
		// so a rollout without it cannot be listed or resumed.
		ev := MetaMissingEvidence{Empty: e.st.Records == 0}
		p := Pos{Line: 1}
		switch {
		case ev.Empty:
			p = Pos{} // no line to name
		case e.firstLine != 0:
			p = Pos{Line: e.firstLine, Offset: e.firstOffset}
		}
		e.emit(p, ev)
	}
	if len(e.pendingLineage) > 0 {
		p := Pos{Line: 1}
		if e.firstLine != 0 {
			p = Pos{Line: e.firstLine, Offset: e.firstOffset}
		}
		e.lineageAtMeta(p, false)
	}
	if e.failClosed {
		return e.detach()
	}
	if e.turn != nil && !e.turn.derived {
		e.emit(e.turn.Pos, TurnUnclosedEvidence{TurnID: e.turn.ID, AtEOF: true})
	}
	if e.reemitted > 0 {
		e.emit(e.firstReemitted, TokensReemittedEvidence{Count: e.reemitted})
	}
	if e.ordInLegacy > 0 {
		e.emit(e.firstOrdInLegacy, OrdinalInLegacyEvidence{Count: e.ordInLegacy})
	}
	e.judgeTail()
	for _, o := range e.compactedRollbacks {
		e.obs(o)
	}
	e.orphanCalls()
	e.judgePrompts()
	e.reportPrompts()
	if e.st.Era == rollout.EraEnvelope && e.st.HistoryMode == rollout.HistoryLegacy {
		for _, o := range e.overLimit {
			e.obs(o)
		}
	}
	e.judgeHandoffs()
	usesIDs := e.st.UsesItemIDs || e.st.HistoryMode == rollout.HistoryPaginated
	if usesIDs && e.st.Era == rollout.EraEnvelope {
		e.missingIDs.each(e.types, e.obs)
	}
	return e.detach()
}

// detach hands the state over. The State returned shares nothing with the
// engine, so the engine's working set (id and call maps, turn checkpoints,
// the handoff tracker, the frame replay) is freed with it: what a caller
// keeps is the reconstructed thread, not the replay.
func (e *engine) detach() *State {
	e.st.finish(e)
	st := new(State)
	*st = e.st
	e.st = State{}
	return st
}

// isUserMessage reports whether an item is a user message (a user turn boundary).
func isUserMessage(itemType, role string) bool {
	return itemType == "message" && role == "user"
}

// frameEvent turns an event of the frame-log replay into an observation.
func (e *engine) frameEvent(ev frames.Event) {
	var x Evidence
	switch f := ev.Facts.(type) {
	case frames.MismatchFacts:
		x = FrameDeltaMismatchEvidence(f)
	case frames.UnterminatedFacts:
		x = FrameUnterminatedEvidence(f)
	case frames.SupersededFacts:
		x = FrameSupersededBytesEvidence(f)
	case frames.UnknownTypeFacts:
		x = FrameUnknownTypeEvidence(f)
	case frames.ReclaimFacts:
		x = FlowFramesReclaimEvidence(f)
	default:
		return
	}
	e.emit(Pos{Line: ev.Line, Offset: ev.Offset}, x)
}

// cutType is the line type named at the start of a line that does not
// parse ("" when it names none): a record cut short says what was lost.
// gjson reads the members before the cut.
func cutType(raw []byte) string {
	if t := gjson.GetBytes(raw, "type"); t.Type == gjson.String {
		return t.String()
	}
	return ""
}
