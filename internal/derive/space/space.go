// Package space accounts for where a rollout's bytes are: by record type, by
// JSON path class, in repeated large strings, and in what each reclaim policy
// would free. It is a model derived from the records (internal/derive):
// an observer beside the replay engine (bytes -> records -> space
// accounting) that knows nothing of rules and prints nothing; the space
// printer in internal/output/report writes it out, and reclaim plans from it.
// ReadAll accounts a run's files on a pool of workers into one Summary.
//
// Memory follows the number of distinct path classes and large strings, not
// the file size: every line is walked once and nothing of it is kept but
// counters and 64-bit hashes.
package space

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sort"
	"time"

	"github.com/rollout-dev/rollout/rollout"
)

// Policies name what `rollout reclaim` can give up; space says what each frees.
const (
	PolicyCompress              = "compress"
	PolicySupersededCheckpoints = "superseded-checkpoints"
	PolicyDuplicateExecOutput   = "duplicate-exec-output"
	PolicyBeforeTurn            = "before-turn"
)

// Options tune the accounting.
type Options struct {
	// MinRepeat is the smallest string tracked for repetition (bytes of its
	// JSON literal); 0 means DefaultMinRepeat.
	MinRepeat int
	// Top is how many rows each per-file table keeps; 0 means DefaultTop.
	Top int
	// Plan records, in File.Cuts, the byte ranges the splice policies
	// (superseded-checkpoints, duplicate-exec-output) would remove.
	Plan bool
	// CutsOnly accounts for nothing but those cuts and the file's thread:
	// no tables, no repeats, no before-turn, and only the payloads the
	// cuts depend on (tool outputs, completed items) are walked.
	CutsOnly bool
}

// Cut is one byte range a reclaim policy replaces, inside one line.
type Cut struct {
	Policy     string
	Line       int
	LineOffset int64 // byte offset of the line in the content
	Start, End int   // the range, relative to the line
	Repl       string
	Path       string // the JSON member it removes or empties
}

const (
	DefaultMinRepeat = 4096
	DefaultTop       = 10

	// maxClasses bounds the path classes of one file: world-state patches
	// and tool arguments can use a new key on every line.
	maxClasses = 4096
	// maxDepth bounds the walk; deeper values count as one leaf.
	maxDepth   = 48
	maxKeyLen  = 64
	otherClass = "(other)"
	envelope   = "(envelope)"
	structure  = "(keys and punctuation)"
)

// Bucket is a named byte count.
type Bucket struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	Count int64  `json:"count"`
}

// Repeat is a large string that occurs more than once.
type Repeat struct {
	Hash      string `json:"hash"`  // 64-bit content hash, hex
	Class     string `json:"class"` // the path class of its first occurrence
	Size      int64  `json:"size"`  // bytes of one occurrence (JSON literal)
	Count     int64  `json:"count"`
	FirstLine int    `json:"first_line"`
}

// Wasted is what all but one occurrence cost.
func (r Repeat) Wasted() int64 { return (r.Count - 1) * r.Size }

// File is the account of one rollout.
type File struct {
	// Set by the caller, who knows the file on disk.
	Path       string
	DiskBytes  int64
	Compressed bool // stored as zstd
	Cold       bool // idle long enough for the compress policy
	// Idle is how long ago the file was last written (0: unknown, as for
	// standard input): why a file is not cold.
	Idle time.Duration
	// CompressedBytes estimates the zstd size of a cold plain file (0: not estimated).
	CompressedBytes int64

	ThreadID       string
	ParentThreadID string // the thread that spawned this one as a sub-agent
	// AttachedTo is the thread this one is attached to as a side
	// conversation: session_meta says attached_thread and names it in
	// forked_from_id (Codex 0.171, thread/fork with attachToSource).
	AttachedTo string
	Lines      int
	Bytes      int64 // content bytes (decompressed)

	ByType  []Bucket // every record type, largest first
	ByClass []Bucket // the Top largest path classes
	Repeats []Repeat // the Top repeated strings by bytes wasted
	// RepeatWasted sums Wasted over every repeated string, not only Top.
	RepeatWasted int64

	Compactions int
	// SupersededCheckpoints is the replacement_history bytes of compactions
	// that a later compaction supersedes (0 when a rollback follows the
	// newest one: it might bring an older checkpoint back).
	SupersededCheckpoints int64
	// RollbackAfterCheckpoint tells why SupersededCheckpoints is 0.
	RollbackAfterCheckpoint bool
	// ClassesCapped: the file had more than maxClasses path classes; the
	// rest are counted as "(other)".
	ClassesCapped bool
	// DuplicateExecOutput is the bytes of item_completed command output
	// strings that repeat a tool output of the same call exactly.
	DuplicateExecOutput int64

	// Cuts are the ranges of the splice policies, in file order (Plan only).
	Cuts []Cut

	// Checkpoints are the compactions with a replacement_history, and Bulk
	// the large payload strings of response items and events, in file
	// order: what before-turn N empties before the checkpoint a rollback of
	// N turns falls back to (see BeforeTurn).
	Checkpoints []Checkpoint
	Bulk        []Cut
	Rollbacks   []int // lines of thread_rolled_back events
	// BeforeTurnFree is what before-turn N frees (see EstimateBeforeTurn),
	// UserTurns the user turns that N is compared with.
	BeforeTurnFree int64
	UserTurns      int
}

// EstimateBeforeTurn sets BeforeTurnFree for before-turn n (Plan only).
func (f *File) EstimateBeforeTurn(n int, userTurnStarts []int) {
	_, cuts := f.BeforeTurn(n, userTurnStarts)
	f.BeforeTurnFree, f.UserTurns = 0, len(userTurnStarts)
	for _, c := range cuts {
		f.BeforeTurnFree += int64(c.End-c.Start) - int64(len(c.Repl))
	}
}

// Checkpoint is a compaction with a replacement_history.
type Checkpoint struct {
	Line int
	Cuts []Cut // emptying its replacement_history (and metadata)
}

// Account accumulates the space of one file; feed it every record in order.
type Account struct {
	opts    Options
	seed    maphash.Seed
	file    File
	byType  map[string]*Bucket
	byClass map[string]*Bucket
	repeats map[uint64]*Repeat
	path    []byte
	line    int
	leafSum int64

	compactions  []compaction
	rollbackLast bool // a rollback follows the newest compaction

	outputs map[string][]uint64 // call_id -> hashes of the tool output's strings
	exec    []execOutput        // item_completed command output strings

	names map[string]string // payload types seen (intern)
	name  []byte            // the record's kind, being built

	// set while walking one record
	cur       *rollout.Record // the record
	rec       *rollout.Record // the line, when its ranges can be planned
	bulkOK    bool            // a response item or event: before-turn may empty its strings
	inOutput  string          // call_id of the tool output being walked
	execID    string          // id of the item_completed CommandExecution being walked
	execField bool
}

type compaction struct {
	line int
	rh   int64 // replacement_history bytes
	cuts []Cut
}

type execOutput struct {
	callID string
	hash   uint64
	size   int64
	cut    Cut
}

// New starts the account of one file.
func New(opts Options) *Account {
	if opts.MinRepeat <= 0 {
		opts.MinRepeat = DefaultMinRepeat
	}
	if opts.Top <= 0 {
		opts.Top = DefaultTop
	}
	return &Account{
		opts: opts, seed: seed,
		byType: map[string]*Bucket{}, byClass: map[string]*Bucket{},
		repeats: map[uint64]*Repeat{}, outputs: map[string][]uint64{}, names: map[string]string{},
	}
}

var envelopeClass, structureClass = []byte(envelope), []byte(structure)

// seed is shared so that hashes are comparable across files of one run.
var seed = maphash.MakeSeed()

// Feed accounts for one record.
func (a *Account) Feed(rec *rollout.Record) {
	a.file.Lines++
	size := rec.Size + int64(len(rec.EOL))
	a.file.Bytes += size
	a.line = rec.Line
	switch rec.Shape {
	case rollout.ShapeObject:
	case rollout.ShapeConcatenated:
		for _, p := range rec.Parts {
			sub := rollout.Record{Line: rec.Line, Raw: rec.Raw[p[0]:p[1]], Shape: rollout.ShapeObject}
			a.object(&sub, int64(p[1]-p[0]), false)
		}
		a.bucket(a.byType, []byte("(concatenated line)"), size-sumParts(rec.Parts))
		return
	default:
		name := []byte("(" + rec.Shape.String() + " line)")
		a.bucket(a.byType, name, size)
		a.bucket(a.byClass, name, size)
		return
	}
	a.object(rec, size, true)
}

func sumParts(parts [][2]int) int64 {
	var n int64
	for _, p := range parts {
		n += int64(p[1] - p[0])
	}
	return n
}

// object walks one JSON object record of size bytes (with its terminator).
// Each byte is scanned once: the payload's members are where the reader's
// validator noted them, and below them one recursive walk finds each
// value's end as it accounts for it (walking members by their ranges
// scanned a value once per level of nesting).
// A record of a glued line (plan false) is counted, never cut: Codex skips
// the whole line, and repair restores its records by cutting the torn
// bytes off. Nor is its compaction a checkpoint: resume never sees it.
func (a *Account) object(rec *rollout.Record, size int64, plan bool) {
	typ := rec.Type()
	payload := rec.PayloadBytes()
	a.rec = nil
	if plan && a.opts.Plan && rec.Raw != nil {
		a.rec = rec
	}
	a.cur = rec
	pt := ""
	if payload != nil {
		pt = a.payloadType(payload)
	}
	a.name = a.name[:0]
	var root []byte
	if payload == nil {
		// bare era: the line is the item
		if typ == "" {
			a.name = append(a.name, "(bare) session"...)
			root = a.name
		} else {
			a.name = append(append(a.name, "(bare) "...), typ...)
			root = a.name[len("(bare) "):]
		}
	} else if (typ == rollout.TypeResponseItem || typ == rollout.TypeEventMsg) && pt != "" {
		a.name = append(append(append(a.name, typ...), '/'), pt...)
		root = a.name[len(typ)+1:]
	} else {
		a.name = append(a.name, typ...)
		root = a.name
	}
	if !a.opts.CutsOnly {
		a.bucket(a.byType, a.name, size)
	}

	a.leafSum = 0
	// Messages are kept whole: compactions copy them (ids and all) into
	// the history resume reads, and a changed early copy would read as a
	// duplicate id.
	a.bulkOK = typ == rollout.TypeEventMsg ||
		(typ == rollout.TypeResponseItem && payload != nil && pt != "message" && pt != "agent_message")
	switch {
	case !a.opts.CutsOnly && payload == nil:
		a.path = append(a.path[:0], root...)
		a.walk(rec.Raw, 0, 0)
	case !a.opts.CutsOnly:
		a.envelope(rec, payload, typ, pt, root)
	case (typ == rollout.TypeResponseItem && rollout.IsToolOutput(pt)) || (typ == rollout.TypeEventMsg && pt == "item_completed"):
		a.path = append(a.path[:0], root...)
		a.payload(typ, pt, payload)
	}
	if rest := size - a.leafSum; rest > 0 && !a.opts.CutsOnly {
		a.bucket(a.byClass, structureClass, rest)
	}

	switch {
	case typ == rollout.TypeCompacted && plan:
		c := compaction{line: rec.Line}
		a.members(payload, func(key []byte, start, end int) bool {
			k := string(key)
			if (k == "replacement_history" || k == "replacement_history_metadata") && payload[start] == '[' {
				if k == "replacement_history" {
					c.rh = int64(end - start)
				}
				if a.rec != nil && end-start > 2 {
					at := posIn(a.rec.Raw, payload) + start
					c.cuts = append(c.cuts, Cut{Policy: PolicySupersededCheckpoints, Line: rec.Line, LineOffset: rec.Offset,
						Start: at, End: at + end - start, Repl: "[]", Path: "payload." + k})
				}
			}
			return true
		})
		a.compactions = append(a.compactions, c)
		a.rollbackLast = false
	case typ == rollout.TypeEventMsg:
		if pt == "thread_rolled_back" {
			a.file.Rollbacks = append(a.file.Rollbacks, rec.Line)
			if len(a.compactions) > 0 {
				a.rollbackLast = true
			}
		}
	case typ == rollout.TypeSessionMeta:
		if a.file.ThreadID == "" {
			a.meta(payload)
		}
	}
	a.cur = nil
}

// envelope walks the top-level members of an enveloped record: each member
// but the payload is one envelope leaf; the payload, whose range the
// reader already knows, is not scanned to find its end.
func (a *Account) envelope(rec *rollout.Record, payload []byte, typ, pt string, root []byte) {
	raw := rec.Raw
	pStart := posIn(raw, payload)
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		kEnd := rollout.ValueEnd(raw, i)
		if kEnd < 0 {
			return
		}
		key := raw[i+1 : kEnd-1]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return
		}
		start := skipSpace(raw, i+1)
		end := pStart + len(payload)
		if start != pStart {
			if end = rollout.ValueEnd(raw, start); end < 0 {
				return
			}
		}
		if string(key) == "payload" {
			a.path = append(a.path[:0], root...)
			a.payload(typ, pt, raw[start:end])
		} else {
			a.leaf(envelopeClass, int64(end-start))
		}
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ',' {
			return
		}
		i = skipSpace(raw, i+1)
	}
}

// payload walks a payload, noting the tool outputs and command executions
// that duplicate-exec-output compares. pt is the type of the record's
// payload (another "payload" member of the line has its own).
func (a *Account) payload(typ, pt string, p []byte) {
	if !a.isRecordPayload(p) {
		pt = a.payloadType(p)
	}
	a.inOutput, a.execID = "", ""
	switch {
	case typ == rollout.TypeResponseItem && rollout.IsToolOutput(pt):
		a.inOutput = a.memberString(p, "call_id")
	case typ == rollout.TypeEventMsg && pt == "item_completed":
		var item []byte
		a.members(p, func(key []byte, start, end int) bool {
			if string(key) == "item" {
				item = p[start:end]
			}
			return true
		})
		if a.payloadType(item) == "CommandExecution" {
			a.execID = memberString(item, "id")
		}
	}
	if len(p) > 0 && p[0] == '{' && a.isRecordPayload(p) {
		n := len(a.path)
		a.cur.PayloadMembers(func(key []byte, s, e int) bool {
			a.path = append(a.path[:n], '.')
			a.appendKey(key)
			a.member(p, key, s, 1)
			return true
		})
		a.path = a.path[:n]
	} else {
		a.walk(p, 0, 1)
	}
	a.inOutput, a.execID = "", ""
}

func (a *Account) meta(p []byte) {
	a.file.ThreadID = a.memberString(p, "id")
	if string(a.member1(p, "attached_thread")) == "true" {
		a.file.AttachedTo = a.memberString(p, "forked_from_id")
	}
	a.file.ParentThreadID = a.memberString(p, "parent_thread_id")
	if a.file.ParentThreadID != "" {
		return
	}
	// Sub-agents name their parent in source.subagent.thread_spawn
	// (codex-rs/protocol SessionSource::SubAgent(SubAgentSource::ThreadSpawn)).
	src := a.member1(p, "source")
	if sub := member(src, "subagent"); sub != nil {
		a.file.ParentThreadID = memberString(member(sub, "thread_spawn"), "parent_thread_id")
	}
}

// walk accounts for the JSON value at raw[i] (the line is valid JSON) at
// the class in a.path, depth containers down from the record, and returns
// the index just past it (-1: it does not end).
func (a *Account) walk(raw []byte, i, depth int) int {
	if i >= len(raw) {
		return -1
	}
	c := raw[i]
	if depth >= maxDepth || (c != '{' && c != '[') {
		e := rollout.ValueEnd(raw, i)
		if e > i {
			a.scalar(raw[i:e])
		}
		return e
	}
	n := len(a.path)
	i = skipSpace(raw, i+1)
	if c == '{' {
		for i < len(raw) && raw[i] == '"' {
			kEnd := rollout.ValueEnd(raw, i)
			if kEnd < 0 {
				return -1
			}
			key := raw[i+1 : kEnd-1]
			i = skipSpace(raw, kEnd)
			if i >= len(raw) || raw[i] != ':' {
				return -1
			}
			a.path = append(a.path[:n], '.')
			a.appendKey(key)
			e := a.member(raw, key, skipSpace(raw, i+1), depth)
			if e < 0 {
				return -1
			}
			if i = skipSpace(raw, e); i < len(raw) && raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
	} else {
		a.path = append(a.path[:n], "[]"...)
		for i < len(raw) && raw[i] != ']' {
			e := a.walk(raw, i, depth+1)
			if e < 0 {
				return -1
			}
			if i = skipSpace(raw, e); i < len(raw) && raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
	}
	a.path = a.path[:n]
	if i >= len(raw) {
		return -1
	}
	return i + 1
}

// member walks the value at raw[s] of member key of a container depth
// down, and returns the index just past it. The output fields of a command
// execution are noted for duplicate-exec-output, the first string of each
// with the cut that removes the member.
func (a *Account) member(raw, key []byte, s, depth int) int {
	if a.execID == "" || depth != 2 || !isExecOutputField(key) {
		return a.walk(raw, s, depth+1)
	}
	a.execField = true
	k := len(a.exec)
	e := a.walk(raw, s, depth+1)
	a.execField = false
	if e >= 0 && a.rec != nil && len(a.exec) > k {
		a.exec[k].cut = memberCut(a.rec, raw, key, e)
	}
	return e
}

// isExecOutputField names the output fields of Codex's CommandExecutionItem
// (codex-rs/protocol/src/items.rs, serialized camelCase).
func isExecOutputField(key []byte) bool {
	switch string(key) {
	case "stdout", "stderr", "aggregatedOutput", "formattedOutput":
		return true
	}
	return false
}

func (a *Account) appendKey(key []byte) {
	if len(key) > maxKeyLen {
		a.path = append(a.path, key[:maxKeyLen]...)
		a.path = append(a.path, "…"...)
		return
	}
	a.path = append(a.path, key...)
}

// scalar counts a leaf at the current class, hashing large strings.
func (a *Account) scalar(v []byte) {
	size := int64(len(v))
	if !a.opts.CutsOnly {
		a.leaf(a.path, size)
	}
	if v[0] != '"' {
		return
	}
	if a.rec != nil && a.bulkOK && len(v) >= BulkMin && !a.opts.CutsOnly && bulkClass(a.path) {
		at := posIn(a.rec.Raw, v)
		a.file.Bulk = append(a.file.Bulk, Cut{Policy: PolicyBeforeTurn, Line: a.rec.Line, LineOffset: a.rec.Offset,
			Start: at, End: at + len(v), Repl: `""`, Path: string(a.path)})
	}
	large := len(v) >= a.opts.MinRepeat && !a.opts.CutsOnly
	if !large && a.inOutput == "" && !a.execField {
		return
	}
	h := maphash.Bytes(a.seed, v)
	if a.inOutput != "" {
		a.outputs[a.inOutput] = append(a.outputs[a.inOutput], h)
	}
	if a.execField {
		a.exec = append(a.exec, execOutput{callID: a.execID, hash: h, size: size})
	}
	if !large {
		return
	}
	if r := a.repeats[h]; r != nil {
		r.Count++
		return
	}
	a.repeats[h] = &Repeat{Class: string(a.path), Size: size, Count: 1, FirstLine: a.line}
}

func (a *Account) leaf(class []byte, size int64) {
	a.leafSum += size
	a.bucket(a.byClass, class, size)
}

// bucket adds size to the bucket name of m; the name is copied only when
// the bucket is new.
func (a *Account) bucket(m map[string]*Bucket, name []byte, size int64) {
	b := m[string(name)]
	if b == nil {
		if len(m) >= maxClasses {
			a.file.ClassesCapped = true
			if b = m[otherClass]; b == nil {
				b = &Bucket{Name: otherClass}
				m[otherClass] = b
			}
		} else {
			b = &Bucket{Name: string(name)}
			m[b.Name] = b
		}
	}
	b.Bytes += size
	b.Count++
}

// isRecordPayload reports whether p is the payload of the record being
// walked, whose members the reader noted.
func (a *Account) isRecordPayload(p []byte) bool {
	if a.cur == nil || len(p) == 0 {
		return false
	}
	q := a.cur.PayloadBytes()
	return len(q) == len(p) && &q[0] == &p[0]
}

// members walks the members of obj, by the reader's ranges when it is the
// record's payload.
func (a *Account) members(obj []byte, fn func(key []byte, start, end int) bool) {
	if a.isRecordPayload(obj) {
		a.cur.PayloadMembers(fn)
		return
	}
	rollout.Members(obj, fn)
}

// member1 is member, by the reader's ranges for the record's payload.
func (a *Account) member1(obj []byte, name string) []byte {
	var out []byte
	a.members(obj, func(key []byte, start, end int) bool {
		if string(key) == name {
			out = obj[start:end]
			return false
		}
		return true
	})
	return out
}

func (a *Account) memberString(obj []byte, name string) string {
	return rollout.DecodeString(a.member1(obj, name))
}

// payloadType is the "type" of a payload or item, interned: every record
// asks for one of a few names.
func (a *Account) payloadType(p []byte) string { return a.intern(a.member1(p, "type")) }

// intern decodes a JSON string value, without a copy when it is one seen
// before (up to maxClasses of them).
func (a *Account) intern(v []byte) string {
	s, ok := rollout.StringValue(v)
	if !ok {
		return rollout.DecodeString(v)
	}
	if n, ok := a.names[string(s)]; ok {
		return n
	}
	n := string(s)
	if len(a.names) < maxClasses {
		a.names[n] = n
	}
	return n
}

// Finish closes the account. classes receives every path class of the file
// (for run-wide totals); the File keeps only the Top ones. The File holds
// nothing of the account: a run keeps one per file read.
func (a *Account) Finish() (*File, []Bucket) {
	f := new(File)
	*f = a.file
	f.ByType = sorted(a.byType)
	all := sorted(a.byClass)
	f.ByClass = slices.Clone(all[:min(len(all), a.opts.Top)])

	var reps []Repeat
	for h, r := range a.repeats {
		if r.Count > 1 {
			r.Hash = hex64(h)
			reps = append(reps, *r)
			f.RepeatWasted += r.Wasted()
		}
	}
	sort.Slice(reps, func(i, j int) bool {
		if reps[i].Wasted() != reps[j].Wasted() {
			return reps[i].Wasted() > reps[j].Wasted()
		}
		return reps[i].FirstLine < reps[j].FirstLine
	})
	f.Repeats = slices.Clone(reps[:min(len(reps), a.opts.Top)])

	f.Compactions = len(a.compactions)
	for _, c := range a.compactions {
		if c.rh > 0 {
			f.Checkpoints = append(f.Checkpoints, Checkpoint{Line: c.line, Cuts: c.cuts})
		}
	}
	last := -1
	for i, c := range a.compactions {
		if c.rh > 0 {
			last = i
		}
	}
	if last > 0 {
		if a.rollbackLast {
			f.RollbackAfterCheckpoint = true
		} else {
			for _, c := range a.compactions[:last] {
				f.SupersededCheckpoints += c.rh
				f.Cuts = append(f.Cuts, c.cuts...)
			}
		}
	}
	for _, e := range a.exec {
		for _, h := range a.outputs[e.callID] {
			if h == e.hash {
				f.DuplicateExecOutput += e.size
				if e.cut.Policy != "" {
					f.Cuts = append(f.Cuts, e.cut)
				}
				break
			}
		}
	}
	sort.SliceStable(f.Cuts, func(i, j int) bool {
		if f.Cuts[i].Line != f.Cuts[j].Line {
			return f.Cuts[i].Line < f.Cuts[j].Line
		}
		return f.Cuts[i].Start < f.Cuts[j].Start
	})
	return f, all
}

func sorted(m map[string]*Bucket) []Bucket {
	out := make([]Bucket, 0, len(m))
	for _, b := range m {
		out = append(out, *b)
	}
	sortBuckets(out)
	return out
}

// sortBuckets orders buckets by bytes, largest first, then by name.
func sortBuckets(b []Bucket) {
	sort.Slice(b, func(i, j int) bool {
		if b[i].Bytes != b[j].Bytes {
			return b[i].Bytes > b[j].Bytes
		}
		return b[i].Name < b[j].Name
	})
}

func hex64(h uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[h&0xf]
		h >>= 4
	}
	return string(b[:])
}

// BulkMin is the smallest string before-turn empties.
const BulkMin = 1024

// bulkKeys are the members whose large strings before-turn empties: tool
// output and arguments, images, opaque reasoning and compaction blobs,
// command output of item_completed events. Message text is kept: turn
// pairing and the rules read it.
var bulkKeys = map[string]bool{
	"output": true, "arguments": true, "input": true, "result": true, "image_url": true,
	"encrypted_content": true, "stdout": true, "stderr": true, "aggregatedOutput": true,
	"formattedOutput": true, "aggregated_output": true, "formatted_output": true,
}

// bulkClass reports whether a path class ends in a bulk member, or is an
// element of an images array.
func bulkClass(path []byte) bool {
	if bytes.HasSuffix(path, []byte(".images[]")) {
		return true
	}
	i := bytes.LastIndexByte(path, '.')
	if i < 0 {
		return false
	}
	return bulkKeys[string(bytes.TrimSuffix(path[i+1:], []byte("[]")))]
}

// BeforeTurn is the plan of before-turn N: userTurnStarts are the start
// lines of the surviving user turns, in order. A rollback of at most N
// turns falls back to the newest checkpoint before the Nth-newest user
// turn; resume never reads what comes before it, so its large strings and
// the replacement_history of older checkpoints can go. It returns that
// checkpoint's line (0 and no cuts when there is none) and the cuts.
func (f *File) BeforeTurn(n int, userTurnStarts []int) (line int, cuts []Cut) {
	if n < 1 || len(userTurnStarts) <= n {
		return 0, nil
	}
	bound := userTurnStarts[len(userTurnStarts)-n]
	for _, c := range f.Checkpoints {
		if c.Line < bound {
			line = c.Line
		}
	}
	if line == 0 {
		return 0, nil
	}
	for _, c := range f.Checkpoints {
		if c.Line < line {
			for _, k := range c.Cuts {
				k.Policy = PolicyBeforeTurn
				cuts = append(cuts, k)
			}
		}
	}
	for _, b := range f.Bulk {
		if b.Line < line {
			cuts = append(cuts, b)
		}
	}
	for _, r := range f.Rollbacks {
		if r > line {
			// The rollback may have dropped the checkpoint's own turn.
			return 0, nil
		}
	}
	return line, SortCuts(cuts)
}

// SortCuts orders cuts by position and drops any that overlaps an earlier
// one (a member removed whole contains its string's cut).
func SortCuts(cuts []Cut) []Cut {
	sort.SliceStable(cuts, func(i, j int) bool {
		ai, aj := cuts[i].LineOffset+int64(cuts[i].Start), cuts[j].LineOffset+int64(cuts[j].Start)
		if ai != aj {
			return ai < aj
		}
		return cuts[i].End-cuts[i].Start > cuts[j].End-cuts[j].Start
	})
	out := cuts[:0]
	var end int64 = -1
	for _, c := range cuts {
		if c.LineOffset+int64(c.Start) < end {
			continue
		}
		out = append(out, c)
		end = c.LineOffset + int64(c.End)
	}
	return out
}

// posIn is the index of sub inside line, sub being a slice of line.
func posIn(line, sub []byte) int { return cap(line) - cap(sub) }

// memberCut is the range that removes member key (its value ending at
// base[e], base a slice of the line) with one of its separating commas, so
// the object stays valid JSON.
func memberCut(rec *rollout.Record, base, key []byte, e int) Cut {
	raw := rec.Raw
	start := posIn(raw, key) - 1 // the key's opening quote
	end := posIn(raw, base) + e
	i := start - 1
	for i >= 0 && isSpace(raw[i]) {
		i--
	}
	if i >= 0 && raw[i] == ',' {
		start = i
	} else {
		j := end
		for j < len(raw) && isSpace(raw[j]) {
			j++
		}
		if j < len(raw) && raw[j] == ',' {
			end = j + 1
		}
	}
	return Cut{Policy: PolicyDuplicateExecOutput, Line: rec.Line, LineOffset: rec.Offset,
		Start: start, End: end, Path: "payload.item." + string(key)}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return i
}

// member returns the raw value of an object's member, or nil.
func member(obj []byte, name string) []byte {
	var out []byte
	rollout.Members(obj, func(key []byte, start, end int) bool {
		if string(key) == name {
			out = obj[start:end]
			return false
		}
		return true
	})
	return out
}

func memberString(obj []byte, name string) string {
	return rollout.DecodeString(member(obj, name))
}
