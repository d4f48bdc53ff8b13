package rollout

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"unique"

	"github.com/tidwall/gjson"
)

// Meta is what a rollout's session_meta says about the thread and the
// rollouts it continues: the fields lineages, the threads index and the
// write guard read without replaying the file.
type Meta struct {
	Found       bool   // a session_meta was read
	Line        int    // its line
	Offset      int64  // its byte offset
	ThreadID    string // payload.id (envelope era) or the first line's id (bare era), lower case
	HistoryMode string // rollout.HistoryMode of the payload
	// Base is session_meta.history_base: the prefix of another rollout this
	// file continues (a paginated fork or revert); nil when there is none.
	Base *HistoryBase
	// ForkedFrom is forked_from_id, the thread a fork was made from ("" for
	// none); ParentThread the thread that spawned a sub-agent.
	ForkedFrom   string
	ParentThread string
	// SubagentStart is subagent_history_start_ordinal: the records before
	// it are the parent's model context, copied into a sub-agent's file
	// (-1: absent).
	SubagentStart int64
	// CLIVersion is the cli_version of the Codex that wrote the file.
	CLIVersion string
}

// HistoryBase is HistoryPosition (codex-rs/protocol/src/protocol.rs): the
// exclusive end of the inherited prefix of another rollout.
type HistoryBase struct {
	RolloutID  string // history_base.thread_id: a rollout id, lower case
	EndOrdinal int64  // end_ordinal_exclusive
	EndOffset  int64  // end_byte_offset
	// Malformed names a field that is missing or not a non-negative
	// integer ("" when the base is well formed).
	Malformed string
}

// metaLinesRead bounds how far ReadMeta looks for session_meta: it is the
// first line of a healthy file, and a few damaged lines may precede it.
const metaLinesRead = 8

// metaMaxLine bounds the line ReadMeta reads: session_meta carries the base
// instructions (tens of KB), never megabytes.
const metaMaxLine = 4 << 20

// ReadMeta reads the session_meta near the top of the rollout at path
// (.zst decompressed). A file that cannot be opened is an error; one
// without a session_meta in its first lines gives a Meta with Found false.
func ReadMeta(path string) (Meta, error) {
	f, err := openHead(path, metaLinesRead*metaMaxLine)
	if err != nil {
		return Meta{}, err
	}
	defer f.Close()
	rd := NewReader(f, metaMaxLine)
	defer rd.Release()
	for range metaLinesRead {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return Meta{}, nil
		}
		if err != nil {
			return Meta{}, err
		}
		if !rec.Valid() {
			continue
		}
		switch DetectEra(rec) {
		case EraEnvelope:
			if rec.Type() == TypeSessionMeta {
				return MetaOf(rec.Line, rec.Offset, rec.MetaPayload()).detached(), nil
			}
		case EraBare:
			return Meta{Found: true, Line: rec.Line, Offset: rec.Offset, ThreadID: strings.ToLower(rec.Get("id").String()), HistoryMode: HistoryLegacy, SubagentStart: -1}, nil
		default:
			return Meta{}, nil
		}
	}
	return Meta{}, nil
}

// detached is m with its own copies of the strings it took from the
// payload, so that the payload's text is not kept with it: a lineage index
// keeps the Meta of every file of a home (5.5 MiB of payloads at 50,000
// rollouts).
func (m Meta) detached() Meta {
	m.ThreadID, m.ForkedFrom, m.ParentThread = strings.Clone(m.ThreadID), strings.Clone(m.ForkedFrom), strings.Clone(m.ParentThread)
	m.CLIVersion = unique.Make(m.CLIVersion).Value() // a home holds few versions
	if m.Base != nil {
		b := *m.Base
		b.RolloutID = strings.Clone(b.RolloutID)
		m.Base = &b
	}
	return m
}

// MetaOf reads a session_meta payload found at line and offset.
func MetaOf(line int, offset int64, p gjson.Result) Meta {
	// One walk of the payload, not a lookup per field: each lookup scanned
	// the session_meta from its start.
	f := ResultMembers(p, "id", "history_mode", "forked_from_id", "source", "parent_thread_id", "subagent_history_start_ordinal", "history_base", "cli_version")
	id, mode, forked, source, parent, subStart, base := f[0], f[1], f[2], f[3], f[4], f[5], f[6]
	m := Meta{Found: true, Line: line, Offset: offset, ThreadID: strings.ToLower(id.String()),
		HistoryMode: historyModeOf(mode), ForkedFrom: strings.ToLower(forked.String()), SubagentStart: -1}
	if v := f[7]; v.Type == gjson.String {
		m.CLIVersion = v.Str
	}
	m.ParentThread = strings.ToLower(source.Get("subagent.thread_spawn.parent_thread_id").String())
	if m.ParentThread == "" {
		m.ParentThread = strings.ToLower(parent.String())
	}
	if v, ok := nonNegative(subStart); ok {
		m.SubagentStart = v
	}
	if b := base; b.Exists() && b.Type != gjson.Null {
		hb := &HistoryBase{RolloutID: strings.ToLower(b.Get("thread_id").String())}
		var ok bool
		switch {
		case !b.IsObject():
			hb.Malformed = "history_base"
		case b.Get("thread_id").Type != gjson.String || !isUUID(hb.RolloutID):
			hb.Malformed = "thread_id"
		}
		if hb.EndOrdinal, ok = nonNegative(b.Get("end_ordinal_exclusive")); !ok && hb.Malformed == "" {
			hb.Malformed = "end_ordinal_exclusive"
		}
		if hb.EndOffset, ok = nonNegative(b.Get("end_byte_offset")); !ok && hb.Malformed == "" {
			hb.Malformed = "end_byte_offset"
		}
		m.Base = hb
	}
	return m
}

// ResultMembers returns the values of top-level members of the object p by key,
// in the order of keys, in one walk: what p.Get(key) returns for each (the
// first of repeated keys; a missing one does not exist). At most 64 keys.
func ResultMembers(p gjson.Result, keys ...string) []gjson.Result {
	out := make([]gjson.Result, len(keys))
	var got uint64
	if !p.IsObject() {
		return out
	}
	p.ForEach(func(k, v gjson.Result) bool {
		for i, key := range keys {
			if got&(1<<i) == 0 && k.Str == key {
				out[i], got = v, got|1<<i
				break
			}
		}
		return got != 1<<len(keys)-1
	})
	return out
}

// nonNegative reads a JSON integer >= 0 (Codex's u64).
func nonNegative(v gjson.Result) (int64, bool) {
	if v.Type != gjson.Number {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	return n, err == nil && n >= 0
}

// MetaThreadID is the thread id of the session_meta near the top of the
// rollout at path ("" when none is read).
func MetaThreadID(path string) string {
	m, _ := ReadMeta(path)
	return m.ThreadID
}
