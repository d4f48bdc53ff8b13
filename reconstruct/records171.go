package reconstruct

import (
	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

// What Codex added to a rollout after 0.154 (docs/codex-replay.md,
// "Records of Codex 0.171": resume_metadata from 0.157.1, the
// dynamic_tools_updated record from 0.166.0, the rest from 0.171.0): the
// thread's dynamic tool set, which session_meta, a compaction checkpoint
// and the dynamic_tools_updated record carry (the latter two as
// DynamicToolsUpdatedPayload {thread_id, tools}); the id_allocation
// record; and resume_metadata.next_item_ordinal.
//
// Verified with the conformance harness (testdata/0.171.0/dynamic-tools):
// session_meta.dynamic_tools holds the tools thread/start declared, and a
// compacted record's resume_metadata.dynamic_tools {thread_id, tools} the
// set after the checkpoint. Not seen in any run, an async compaction's
// included (testdata/0.171.0/compact-async), so modelled from the binary's
// strings, unverified: dynamic_tools_updated (written by the core's
// replace_dynamic_tools op, which no app-server method of 0.171 sends),
// id_allocation (ResponseItemIdAllocation) and next_item_ordinal.

// DynamicTools is the thread's dynamic tool set as resume restores it:
// the newest of session_meta.dynamic_tools, a dynamic_tools_updated
// record and a compaction's resume_metadata.dynamic_tools.
type DynamicTools struct {
	Source string   // DynamicToolsFrom*
	Line   int      // the line that set it
	Names  []string // the tools' names, in order (a namespace's as NAMESPACE.NAME)
	Raw    []byte   // the tools array as the file has it
}

// Where a dynamic tool set came from.
const (
	DynamicToolsFromMeta       = "session_meta"
	DynamicToolsFromUpdate     = rollout.TypeDynamicToolsUpdated
	DynamicToolsFromCheckpoint = "compacted.resume_metadata"
)

// IDAllocation is the newest id_allocation record: Codex's item id
// allocator state (ResponseItemIdAllocation in 0.171's binary). Its shape
// is not known (no run of 0.171 wrote one): the payload is kept verbatim,
// and repair derives no ids in a file that has one (internal/edit/repair).
type IDAllocation struct {
	Line    int
	Records int    // id_allocation records in the file
	Raw     []byte // the payload
}

// NextItemCheckpoint is a compaction checkpoint that carries
// resume_metadata.next_item_ordinal (Codex 0.171, unverified). Modelled
// as the ordinal of the first record the checkpoint does not cover: the
// next record for a compaction taken in place; an earlier one if a
// checkpoint is persisted after records it did not sample (the async
// compaction of compact-async puts those items in replacement_history
// and writes no next_item_ordinal). Either way it names a record at or
// before the checkpoint, or the one right after it.
type NextItemCheckpoint struct {
	Line    int   // the compacted record's line
	Ordinal int64 // its ordinal
	Next    int64 // next_item_ordinal
}

// dynamicTools sets the thread's dynamic tool set from a tools array.
func (e *engine) dynamicTools(source string, pos Pos, tools gjson.Result) {
	if !tools.IsArray() {
		return
	}
	dt := &DynamicTools{Source: source, Line: pos.Line, Raw: []byte(tools.Raw), Names: []string{}}
	for _, t := range tools.Array() {
		name := t.Get("name").String()
		if t.Get("type").String() == "namespace" {
			for _, sub := range t.Get("tools").Array() {
				dt.Names = append(dt.Names, name+"."+sub.Get("name").String())
			}
			continue
		}
		dt.Names = append(dt.Names, name)
	}
	e.st.DynamicTools = dt
}

// metaDynamicTools is session_meta.dynamic_tools, which MetaPayload leaves
// out (a bulky member): found by one walk of the payload's members.
func metaDynamicTools(rec *rollout.Record) gjson.Result {
	var out gjson.Result
	p := rec.PayloadBytes()
	rec.PayloadMembers(func(key []byte, start, end int) bool {
		if string(key) == "dynamic_tools" {
			out = gjson.ParseBytes(p[start:end])
			return false
		}
		return true
	})
	return out
}

// dynamicToolsUpdated replays a dynamic_tools_updated record: its tools
// replace the set (the payload modelled as DynamicToolsUpdatedPayload
// {thread_id, tools}, unverified).
func (e *engine) dynamicToolsUpdated(pos Pos, p gjson.Result) {
	e.dynamicTools(DynamicToolsFromUpdate, pos, p.Get("tools"))
}

// idAllocation keeps the newest id_allocation payload.
func (e *engine) idAllocation(pos Pos, p gjson.Result) {
	n := 1
	if e.st.IDAllocation != nil {
		n += e.st.IDAllocation.Records
	}
	e.st.IDAllocation = &IDAllocation{Line: pos.Line, Records: n, Raw: []byte(p.Raw)}
}

// checkpointMetadata reads what Codex 0.171 added to resume_metadata.
func (e *engine) checkpointMetadata(pos Pos, md gjson.Result) {
	if dt := md.Get("dynamic_tools"); dt.IsObject() {
		e.dynamicTools(DynamicToolsFromCheckpoint, pos, dt.Get("tools"))
	}
	n := md.Get("next_item_ordinal")
	if n.Type != gjson.Number || pos.Ordinal == nil || e.st.HistoryMode != rollout.HistoryPaginated || pos.Segment != 0 {
		return
	}
	c := NextItemCheckpoint{Line: pos.Line, Ordinal: *pos.Ordinal, Next: n.Int()}
	e.st.NextItemCheckpoints = append(e.st.NextItemCheckpoints, c)
	if c.Next < e.st.OrdinalBase || c.Next > c.Ordinal+1 {
		e.emit(pos, OrdinalNextItemEvidence{Ordinal: c.Ordinal, Next: c.Next, Base: e.st.OrdinalBase})
	}
}

// OrdinalNextItemEvidence is the evidence of ordinal/next-item: a
// compaction checkpoint at Ordinal whose resume_metadata.next_item_ordinal
// (Next) names no record at or before it (from Base, the thread's first
// ordinal) nor the one right after it.
type OrdinalNextItemEvidence struct {
	Ordinal int64 `json:"ordinal"`
	Next    int64 `json:"next_item_ordinal"`
	Base    int64 `json:"first_ordinal"`
}

var ordinalNextItem = newKind()

func (OrdinalNextItemEvidence) Kind() Kind { return ordinalNextItem }
