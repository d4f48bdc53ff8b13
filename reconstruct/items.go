package reconstruct

import (
	"bytes"
	"hash/maphash"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

var hashSeed = maphash.MakeSeed()

// itemFields are the fields of an item the engine follows, read in one
// walk: payloads reach megabytes and each separate lookup would scan again.
type itemFields struct {
	typ, id, callID, role string
	hasID                 bool   // an "id" member, even "" (not null)
	content               []byte // raw "content" value, for user prompts
}

// common holds the strings every history repeats (item types, roles), so
// that reading them does not allocate a copy per item.
var common = func() map[string]string {
	m := map[string]string{"user": "user", "assistant": "assistant", "developer": "developer", "system": "system", "ghost_snapshot": "ghost_snapshot"}
	for _, t := range rollout.ItemTypes() {
		m[t] = t
	}
	return m
}()

// decodeCommon is rollout.DecodeString, sharing the common strings.
func decodeCommon(v []byte) string {
	if s, ok := rollout.StringValue(v); ok {
		if c, ok := common[string(s)]; ok {
			return c
		}
	}
	return rollout.DecodeString(v)
}

// readItem reads the fields of item; rec, when not nil, is the line whose
// payload item is, and its members are taken from what the validator noted
// instead of walking the payload again.
func readItem(item []byte, rec *rollout.Record) itemFields {
	var f itemFields
	visit := func(key []byte, start, end int) bool {
		v := item[start:end]
		switch string(key) {
		case "type":
			f.typ = decodeCommon(v)
		case "id":
			f.id = rollout.DecodeString(v)
			f.hasID = string(v) != "null"
		case "call_id":
			f.callID = rollout.DecodeString(v)
		case "role":
			f.role = decodeCommon(v)
		case "content":
			f.content = v
		}
		return true
	}
	if rec != nil {
		rec.PayloadMembers(visit)
	} else {
		rollout.Members(item, visit)
	}
	return f
}

// addLiveItem appends the item of a line (a response_item payload, with
// its record, or a bare-era line, rec nil) to the live history.
func (e *engine) addLiveItem(pos Pos, item []byte, rec *rollout.Record, index int) {
	f := readItem(item, rec)
	if rec != nil && f.typ != "" && !rollout.KnownItemType(f.typ) {
		// Codex reads it as ResponseItem's catch-all and sends none: not
		// history (internal/testkit/conformance corrupt/unknown-item-type).
		e.st.LeftOutCount++
		if len(e.st.LeftOut) < MaxLeftOut {
			e.st.LeftOut = append(e.st.LeftOut, LeftOutItem{pos.Line, pos.Segment, f.typ})
		}
		return
	}
	e.sinceWS = true
	prompt := isUserMessage(f.typ, f.role) && !contextualContent(f.content)
	switch {
	case prompt:
		text := contentText(f.content)
		e.userTurnBoundary(pos)
		e.userInput(pos, text)
		e.prompts.input()
		e.lastPrompt = promptKey(text)
	case f.typ != "message" || f.role == "assistant":
		e.prompts.answer()
	}
	if rec != nil && index < 0 {
		if j := e.repeatsPrevLine(rec); j > 0 && f.id == "" && f.callID == "" {
			// Without an id or a call_id only the line itself tells a copy:
			// the same bytes, timestamp included, right after the first.
			e.emit(pos, ItemDuplicateEvidence{ItemType: f.typ, FirstLine: j, ItemIndex: index})
		}
	}
	it := Item{ID: f.id, Type: f.typ, CallID: f.callID, Line: pos.Line, Offset: pos.Offset, Index: index, Segment: pos.Segment}
	it.prompt = prompt
	e.checkID(pos, f, index)
	start := 0 // where item starts in its line
	if rec != nil {
		start = rec.PayloadOffset()
	}
	switch {
	case f.id == "" && f.callID == "":
		// Only items with an id or a call_id are compared (duplicates).
	case e.reread != nil && start <= math.MaxUint32 && len(item) <= math.MaxUint32:
		it.lazy, it.hash = true, uint64(start)<<32|uint64(len(item))
	default:
		it.hash = maphash.Bytes(hashSeed, item)
	}
	e.appendItem(pos, it, item)
}

// prevLine is where the last whole response_item line lies, and its
// bytes when the file cannot be read again (short lines only).
type prevLine struct {
	line   int
	offset int64
	raw    []byte
}

// maxKeptLine is the longest previous line kept to compare with the next
// when the file cannot be read again (stdin, zstd).
const maxKeptLine = 4096

// repeatsPrevLine reports the line of the previous response_item line
// when rec (a whole line right after it) repeats it byte for byte; 0
// otherwise. It notes rec as the new previous line.
func (e *engine) repeatsPrevLine(rec *rollout.Record) int {
	if !e.whole {
		return 0
	}
	prev, same := e.prevItem, false
	// Adjacent, and as long (the previous line's end is this one's start).
	if prev.line != 0 && prev.line == rec.Line-1 && rec.Offset-prev.offset == int64(len(rec.Raw))+int64(len(rec.EOL)) {
		switch {
		case e.reread != nil:
			b := make([]byte, len(rec.Raw))
			_, err := e.reread.ReadAt(b, prev.offset)
			same = err == nil && bytes.Equal(b, rec.Raw)
		case prev.raw != nil:
			same = bytes.Equal(prev.raw, rec.Raw)
		}
	}
	e.prevItem = prevLine{line: rec.Line, offset: rec.Offset}
	if e.reread == nil && len(rec.Raw) <= maxKeptLine {
		e.prevItem.raw = append(prev.raw[:0], rec.Raw...)
	}
	if !same {
		return 0
	}
	return prev.line
}

// contentHash is the content hash of item x of the history; raw, when not
// nil, is its bytes (the line being replayed). Hashing every item with an
// id was a tenth of verify's time, and only an id seen twice needs it: an
// item of a file that can be read again is lazy, its hash field holding
// where its bytes lie in its line (start<<32 | length); they are read back
// from the file and hashed when first needed, and the hash is kept. Bytes
// changed in the file meanwhile hash differently: the content differs.
func (e *engine) contentHash(x *histItem, raw []byte) (uint64, bool) {
	if !x.lazy {
		return x.hash, true
	}
	if raw == nil {
		raw = make([]byte, x.hash&math.MaxUint32)
		if _, err := e.reread.ReadAt(raw, x.offset+int64(x.hash>>32)); err != nil {
			return 0, false
		}
	}
	x.hash, x.lazy = maphash.Bytes(hashSeed, raw), false
	return x.hash, true
}

// appendItem records an item in the live history, pairing tool calls and
// spotting reused ids and items appended twice. raw is the item's bytes.
func (e *engine) appendItem(pos Pos, it Item, raw []byte) {
	h := e.st.History
	i := h.Len()
	h.append(it)
	var ch uint32 // the call id's keyHash, for the three indexes keyed by it
	if it.CallID != "" {
		ch = keyHash(h.callID(h.item(i)))
	}
	if e.duplicate(pos, h, i, it, raw, ch) {
		// The same item again: Codex sends both copies, but it is one
		// call (or one output) for the pairing, as Codex's normalize step
		// pairs by call_id.
		h.item(i).dup = true
		return
	}
	switch {
	case rollout.IsToolCall(it.Type) && it.CallID != "":
		if j, ok := e.calls.addHash(h, i, ch); ok {
			e.emit(pos, ToolDuplicateCallIDEvidence{CallID: it.CallID, FirstLine: h.pos(j).Line, ItemIndex: it.Index})
			if h.item(j).answered {
				// The earlier call is done: outputs from here on answer this one.
				e.calls.putHash(h, i, ch)
			}
		}
		e.pending[it.CallID] = append(e.pending[it.CallID], i)
	case rollout.IsToolOutput(it.Type):
		if it.CallID != "" {
			e.outputs.addHash(h, i, ch)
		}
		// Another output for an answered call is not an orphan.
		if _, known := e.calls.getItemHash(h, i, ch); !e.answer(it.CallID) && !known {
			h.setMark(i, markOrphan)
			// Reported at the end, when the file's Codex version is known.
			e.orphanOutputs = append(e.orphanOutputs, Observation{Pos: pos,
				Evidence: ToolOrphanOutputEvidence{CallID: it.CallID, ItemType: it.Type, ItemIndex: it.Index}})
		}
	}
}

// duplicate reports item i (just appended, its bytes raw) when it repeats
// an earlier live item byte for byte: the same id, or without an id the
// same call_id of a tool call or output. Another item under a used id is
// item/duplicate-id.
// ch is the keyHash of its call id.
func (e *engine) duplicate(pos Pos, h *History, i int, it Item, raw []byte, ch uint32) bool {
	var j int
	var ok bool
	switch {
	case it.ID != "":
		if j, ok = e.ids.add(h, i); ok && !e.sameItem(h, j, i, raw) {
			e.emit(pos, ItemDuplicateIDEvidence{ID: it.ID, FirstLine: h.pos(j).Line, ItemIndex: it.Index})
			return false
		}
	case it.CallID != "" && rollout.IsToolCall(it.Type):
		j, ok = e.calls.getItemHash(h, i, ch)
		ok = ok && e.sameItem(h, j, i, raw)
	case it.CallID != "" && rollout.IsToolOutput(it.Type):
		j, ok = e.outputs.getItemHash(h, i, ch)
		ok = ok && e.sameItem(h, j, i, raw)
	}
	if ok {
		e.emit(pos, ItemDuplicateEvidence{ID: it.ID, CallID: it.CallID, ItemType: it.Type,
			FirstLine: h.pos(j).Line, ItemIndex: it.Index})
	}
	return ok
}

// sameItem reports whether items j and i of h (i just appended, its bytes
// raw) have the same type and content. A hash that cannot be computed (the
// file changed under us), or an item never hashed, counts as different.
func (e *engine) sameItem(h *History, j, i int, raw []byte) bool {
	first, last := h.item(j), h.item(i)
	if first.typ != last.typ || !first.hashed() || !last.hashed() {
		return false
	}
	a, okA := e.contentHash(first, nil)
	b, okB := e.contentHash(last, raw)
	return okA && okB && a == b
}

// checkID looks at an item's id: missing, prefix, UUIDv7 shape.
func (e *engine) checkID(pos Pos, f itemFields, index int) {
	prefix, typed := rollout.ItemPrefix(f.typ)
	if typed {
		e.checkRejectedID(pos, f, index)
	}
	if f.id == "" && f.hasID && typed {
		return // "id":"" is item/rejected-id, not a missing id
	}
	if f.id == "" {
		if typed && index < 0 {
			e.missingIDs.add(pos, e.types.intern(f.typ))
		}
		return
	}
	e.checkPrefixedID(pos, f.id, f.typ, prefix, typed, index)
}

func (e *engine) checkPrefixedID(pos Pos, id, typ, prefix string, typed bool, index int) {
	p, rest, ok := rollout.SplitID(id)
	if !ok {
		return // unprefixed legacy ids are legal on disk; Codex strips them
	}
	if typed && p != prefix {
		e.emit(pos, ItemPrefixMismatchEvidence{ID: id, ItemType: typ, WantPrefix: prefix, ItemIndex: index})
	}
	if uuidShape(rest, false) {
		e.st.UsesItemIDs = true
		if _, err := rollout.ParseUUIDv7(strings.ToLower(rest)); err != nil {
			e.emit(pos, ItemBadUUIDv7Evidence{ID: id, Reason: err.Error(), ItemIndex: index})
		}
	}
}

// Item ids the Responses API rejects when they are sent (input[N].id):
// empty, longer than 64 characters, or with characters outside
// [A-Za-z0-9_-]; an id without a prefix (a bare UUID) is rejected for the
// prefix the item's type expects. Which of them Codex sends depends on the
// version:
//
//   - before 0.142 item ids are neither persisted nor sent (ResponseItem's
//     id fields are skip_serializing, codex-rs/protocol/src/models.rs at
//     rust-v0.114.0); only the Azure endpoint with store attaches non-empty
//     ones (attach_item_ids, codex-rs/codex-api/src/endpoint/responses.rs);
//   - from 0.142 (openai/codex#28814, f00f93d8c0, behind the item_ids
//     feature until #34645 made it the default in 0.146) they are persisted
//     and every one is sent;
//   - from 0.145 (openai/codex#32312, c9d52de5ca;
//     prepare_response_items_for_request, codex-rs/core/src/client.rs) an
//     empty or unprefixed id is left out of the request, while a prefixed
//     one is still sent as it is.

// maxSentIDLength is the longest id the Responses API accepts.
const maxSentIDLength = 64

// checkRejectedID reports an item id of a shape the API rejects.
func (e *engine) checkRejectedID(pos Pos, f itemFields, index int) {
	if !f.hasID {
		return
	}
	var reasons []string
	_, _, prefixed := rollout.SplitID(f.id)
	switch {
	case f.id == "":
		reasons = append(reasons, "empty")
	case !prefixed:
		reasons = append(reasons, "unprefixed")
	}
	if len(f.id) > maxSentIDLength {
		reasons = append(reasons, "too-long")
	}
	for i := 0; i < len(f.id); i++ {
		if c := f.id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			reasons = append(reasons, "charset")
			break
		}
	}
	if len(reasons) == 0 {
		return
	}
	ev := ItemRejectedIDEvidence{ID: f.id, ItemType: f.typ, ItemIndex: index, Reasons: reasons,
		Stripped: f.id == "" || !prefixed, CLIVersion: e.st.ResumeVersion()}
	if sends, ok := Has(QuirkSendsItemIDs, e.st.ResumeVersion()); ok && e.st.Era == rollout.EraEnvelope {
		strips, _ := Has(QuirkStripsBadIDs, e.st.ResumeVersion())
		sent := sends && !(ev.Stripped && strips)
		ev.Sent = &sent
	}
	e.emit(pos, ev)
}

// uuidShape matches the 8-4-4-4-12 shape of a locally formed id, in hex
// of either case, or only lowercase when lower is set (the only form
// packID can restore byte for byte).
func uuidShape(s string, lower bool) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || !lower && 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// reindex rebuilds the id and call indexes after the history was replaced.
func (e *engine) reindex() {
	e.ids.reset()
	e.calls.reset()
	e.outputs.reset()
	clear(e.pending)
	h := e.st.History
	for i := range h.Len() {
		if x := h.item(i); x.idLen > 0 {
			e.ids.add(h, i)
		}
	}
	// Pair calls and outputs again, in order as appendItem does: answers
	// given in dropped lines no longer count.
	for i := range h.Len() {
		h.item(i).answered = false
	}
	for i := range h.Len() {
		x := h.item(i)
		switch {
		case x.dup:
			// A copy of an earlier item: it pairs as that one.
		case h.isToolCall(x) && x.callLen > 0:
			call := string(h.callID(x))
			if j, ok := e.calls.add(h, i); ok && h.item(j).answered {
				e.calls.put(h, i)
			}
			e.pending[call] = append(e.pending[call], i)
		case h.isToolOutput(x):
			if x.callLen > 0 {
				e.outputs.add(h, i)
			}
			_, known := e.calls.getItem(h, i)
			h.setMark(i, 0)
			if !e.answer(string(h.callID(x))) && !known {
				h.setMark(i, markOrphan)
			}
		}
	}
}

// answer marks the latest unanswered call of id answered; false when
// there is none.
func (e *engine) answer(id string) bool {
	p := e.pending[id]
	if len(p) == 0 {
		return false
	}
	e.st.History.item(p[len(p)-1]).answered = true
	if len(p) == 1 {
		delete(e.pending, id)
	} else {
		e.pending[id] = p[:len(p)-1]
	}
	return true
}

// orphanCalls reports live calls that never got an output. A call of the
// turn still open at the end of the file is reported too, with how long
// ago the file was last written: a session that died mid-call looks exactly
// like one whose tool is still running, and only the age tells them apart.
func (e *engine) orphanCalls() {
	openFrom := 0
	if e.turn != nil {
		openFrom = e.turn.Pos.Line
	}
	idle := e.idleSeconds()
	e.pairByCallID()
	dropped, version := e.normalizes(QuirkNormalizeStep)
	for _, o := range e.orphanOutputs {
		ev := o.Evidence.(ToolOrphanOutputEvidence)
		ev.Normalized, ev.CLIVersion = dropped, version
		e.emit(o.Pos, ev)
	}
	answered, version := e.normalizes(QuirkAnswersOrphanCalls)
	defer func() {
		e.requestHistory(dropped != nil && *dropped, answered != nil && *answered, dropped != nil && *dropped)
	}()
	h := e.st.History
	for i := range h.Len() {
		if x := h.item(i); !h.isToolCall(x) || x.answered || x.callLen == 0 || x.dup {
			continue
		}
		it := h.At(i)
		ev := ToolOrphanCallEvidence{CallID: it.CallID, ItemType: it.Type, ItemIndex: it.Index,
			Normalized: answered, CLIVersion: version}
		if openFrom > 0 && it.Line >= openFrom {
			ev.InOpenTurn = true
			if !e.lastTime.IsZero() {
				ev.LastWritten = e.lastTime.UTC().Format(time.RFC3339Nano)
			}
			if idle >= 0 {
				stopped := idle >= StoppedAfter
				ev.SessionStopped = &stopped
				e.st.Clock = true
			}
		}
		e.emit(Pos{Line: it.Line, Offset: it.Offset, Segment: it.Segment}, ev)
	}
}

// requestHistory turns the live history into what Codex sends: from 0.48
// (dropOrphans) an output without its call is dropped, and every call
// without an output gets an "aborted" one, inserted after it from 0.48
// (after), in front of the history before (Codex 0.40 in
// internal/testkit/conformance/testdata/0.40.0/corrupt/orphan-call). A possibly running
// call of the open last turn is answered too: a resume starts a new
// process, and the old one's tool result never reaches it.
func (e *engine) requestHistory(dropOrphans, answer, after bool) {
	h := e.st.History
	work := false
	for i := range h.Len() {
		x := h.item(i)
		if (dropOrphans && h.mark(i) == markOrphan) || (answer && h.isToolCall(x) && !x.answered && x.callLen > 0) {
			work = true
			break
		}
	}
	if !work {
		return
	}
	out := newHistory(e.types)
	var front []Item
	for i := range h.Len() {
		x := h.item(i)
		if dropOrphans && h.mark(i) == markOrphan {
			continue
		}
		it := h.At(i)
		out.append(it)
		if answer && h.isToolCall(x) && !x.answered && x.callLen > 0 {
			ab := Item{Type: abortedOutputType(it.Type, after), CallID: it.CallID, Line: it.Line, Offset: it.Offset, Index: AbortedIndex, answered: true, Segment: it.Segment}
			if after {
				out.append(ab)
			} else {
				front = append(front, ab)
			}
		}
	}
	if len(front) > 0 {
		all := newHistory(e.types)
		for _, it := range front {
			all.append(it)
		}
		for it := range out.All() {
			all.append(it)
		}
		out = all
	}
	e.st.History = out
}

// abortedOutputType is the output Codex makes for an unanswered call: a
// custom_tool_call_output for every call before 0.48, the call's own kind
// of output from 0.48 on.
func abortedOutputType(call string, after bool) string {
	if !after || call == "custom_tool_call" {
		return "custom_tool_call_output"
	}
	return "function_call_output"
}

// StoppedAfter is how long (in seconds) a file must have been left
// unwritten for an unanswered call of its open last turn to count as
// abandoned rather than running: tool calls rarely run longer.
const StoppedAfter = 3600

// Codex answers a call left without output before every request, and from
// a later release on also drops an output left without its call; the
// release that wrote the file (its cli_version) decides the consequence.
//
// answersOrphanCallsSince: run_turn's missing_calls (codex-rs/core/src/codex.rs)
// sends an "aborted" custom_tool_call_output for every call of the prompt
// without an output, placed before the history; it is in every numbered Rust
// release from rust-v0.2.0 (June 2025) to rust-v0.47.0. From rust-v0.48.0 on
// ContextManager's normalize step does it instead (ensure_call_outputs_present,
// the output inserted after the call).
//
// dropsOrphanOutputsSince: remove_orphan_outputs, which drops an output whose
// call is not in the history, came with openai/codex#5473 (commit 273819aaae,
// merged 2025-10-21), first released in rust-v0.48.0 (it is not in
// rust-v0.47.0). Before it the output is sent and the API rejects the request.

// normalizes says whether the Codex version of the file, judged against the
// first release that does it (since), heals the orphan on resume (nil:
// unknown), and the cli_version it read it from.
func (e *engine) normalizes(since QuirkID) (*bool, string) {
	if e.st.Era == rollout.EraBare {
		no := false // mid 2025: the writer's version is unknown; assume the worst
		return &no, ""
	}
	yes, ok := Has(since, e.st.ResumeVersion())
	if !ok {
		return nil, ""
	}
	return &yes, e.st.ResumeVersion()
}

// contextualPrefixes open the user-role messages Codex writes itself
// (environment context, AGENTS.md and user instructions, skills, shell
// commands the user ran, abort markers, hook prompts, sub-agent notices).
// Codex does not count them as user turns: is_user_turn_boundary and
// is_contextual_user_message_content (codex-rs/core/src/event_mapping.rs,
// context/ fragments) skip them.
var contextualPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# agents.md instructions",
	"<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
	"<hook_prompt", "<skills_instructions>",
}

// contextualContent reports whether any text part of a user message is
// one of Codex's contextual fragments.
func contextualContent(c []byte) bool {
	found := false
	check := func(text string) {
		t := strings.TrimLeft(text, " \t\r\n")
		if len(t) > 32 {
			t = t[:32] // prompts reach megabytes; the prefixes are short
		}
		t = strings.ToLower(t)
		for _, p := range contextualPrefixes {
			if strings.HasPrefix(t, p) {
				found = true
				return
			}
		}
	}
	if len(c) > 0 && c[0] == '"' {
		check(textPrefix(c, 32))
		return found
	}
	rollout.Elements(c, func(start, end int) bool {
		rollout.Members(c[start:end], func(key []byte, ks, ke int) bool {
			if string(key) == "text" {
				check(textPrefix(c[start+ks:start+ke], 32))
			}
			return !found
		})
		return !found
	})
	return found
}

// textPrefix is the start of the text of a raw JSON string value from its
// first character that is not white space (" \t\r\n", as strings.TrimLeft
// of contextualContent), decoded: at least n bytes of it when the text has
// them. Only the start is decoded: a pasted prompt reaches megabytes. A
// value that is not a string is decoded whole, as DecodeString would.
func textPrefix(v []byte, n int) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return rollout.DecodeString(v)
	}
	body := v[1 : len(v)-1]
	i := 0
skip:
	for i < len(body) {
		switch c := body[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '\\' && i+1 < len(body) && (body[i+1] == 't' || body[i+1] == 'r' || body[i+1] == 'n'):
			i += 2
		case c == '\\' && i+5 < len(body) && body[i+1] == 'u' && isSpaceEscape(body[i+2:i+6]):
			i += 6
		default:
			break skip
		}
	}
	// Up to 12n bytes of escapes hold at least 2n characters: n bytes.
	j := i
	for j < len(body) && j-i < 12*n {
		if body[j] == '\\' {
			if j+1 < len(body) && body[j+1] == 'u' {
				j += 6
			} else {
				j += 2
			}
			continue
		}
		j++
	}
	j = min(j, len(body))
	if i == 0 && j == len(body) {
		return rollout.DecodeString(v)
	}
	q := make([]byte, 0, j-i+2)
	q = append(append(append(q, '"'), body[i:j]...), '"')
	t := rollout.DecodeString(q)
	if j < len(body) {
		// The cut may split a surrogate pair: its last character goes.
		_, size := utf8.DecodeLastRuneInString(t)
		t = t[:len(t)-size]
	}
	return t
}

// isSpaceEscape reports whether the four hex digits of a \u escape are a
// tab, carriage return, new line or space.
func isSpaceEscape(h []byte) bool {
	if h[0] != '0' || h[1] != '0' {
		return false
	}
	switch strings.ToLower(string(h[2:])) {
	case "09", "0a", "0d", "20":
		return true
	}
	return false
}

// contentText is the text of a message's content: a string, or the "text"
// of its parts (image parts are skipped unread).
func contentText(c []byte) string {
	if len(c) > 0 && c[0] == '"' {
		return rollout.DecodeString(c)
	}
	var b strings.Builder
	rollout.Elements(c, func(start, end int) bool {
		rollout.Members(c[start:end], func(key []byte, ks, ke int) bool {
			if string(key) == "text" {
				b.WriteString(rollout.DecodeString(c[start+ks : start+ke]))
			}
			return true
		})
		return true
	})
	return b.String()
}

func (e *engine) interAgent(rec *rollout.Record, pos Pos, p gjson.Result) {
	e.sinceWS = true
	if e.turn != nil {
		e.turn.User = true
	}
	e.prompts.input()
	id := p.Get("id")
	if id.String() == "" {
		e.missingIDs.add(pos, agentCommMissing)
		return
	}
	e.checkPrefixedID(pos, id.String(), rollout.TypeInterAgent, rollout.InterAgentPrefix, true, -1)
	e.appendItem(pos, Item{ID: id.String(), Type: rollout.TypeInterAgent, Line: pos.Line, Offset: pos.Offset, Index: -1, Segment: pos.Segment,
		hash: maphash.String(hashSeed, p.Raw)}, nil)
}

// missingIDs are the items without id of a file, held until its end tells
// whether it uses ids: a file of Codex before 0.142 has none at all, so
// each is kept in a few bytes (no Observation, no boxed evidence), in
// blocks that are never copied as they grow.
type missingIDs struct {
	blocks [][]missingID
}

// missingID is one item without id: where it is and its type (an index
// into the engine's typeTable, or agentCommMissing). Items of a line's
// payload only (ItemIndex -1).
type missingID struct {
	offset  int64
	ordinal int64
	line    int
	segment int32
	typ     uint32
	hasOrd  bool
}

// agentCommMissing is missingID.typ of an inter-agent record without id.
const agentCommMissing = math.MaxUint32

// Blocks double from firstMissingBlock to missingBlock: most files are
// small, and a 160 KiB first block, zeroed for each, was 5 % of verifying
// a home.
const (
	firstMissingBlock = 64
	missingBlock      = 4096
)

func (m *missingIDs) add(pos Pos, typ uint32) {
	n := len(m.blocks)
	if n == 0 || len(m.blocks[n-1]) == cap(m.blocks[n-1]) {
		size := missingBlock
		if n < 6 {
			size = firstMissingBlock << n
		}
		m.blocks = append(m.blocks, make([]missingID, 0, size))
		n++
	}
	x := missingID{offset: pos.Offset, line: pos.Line, segment: int32(pos.Segment), typ: typ}
	if pos.Ordinal != nil {
		x.ordinal, x.hasOrd = *pos.Ordinal, true
	}
	m.blocks[n-1] = append(m.blocks[n-1], x)
}

// each hands each to obs as its observation, in the order added.
func (m *missingIDs) each(types *typeTable, obs Observer) {
	for _, b := range m.blocks {
		for _, x := range b {
			pos := Pos{Line: x.line, Offset: x.offset, Segment: int(x.segment)}
			if x.hasOrd {
				ord := x.ordinal
				pos.Ordinal = &ord
			}
			if x.typ == agentCommMissing {
				obs(Observation{Pos: pos, Evidence: AgentCommMissingIDEvidence{Prefix: rollout.InterAgentPrefix}})
				continue
			}
			typ := types.names[x.typ]
			prefix, _ := rollout.ItemPrefix(typ)
			obs(Observation{Pos: pos, Evidence: ItemMissingIDEvidence{ItemType: typ, ItemIndex: -1, Prefix: prefix}})
		}
	}
}
