// Package space accounts for where a rollout's bytes are: by record type, by
// JSON path class, in repeated large strings, and in what each reclaim policy
// would free. It sits beside the replay engine as an observer of records
// (bytes -> records -> space accounting); it knows nothing of rules.
//
// Memory follows the number of distinct path classes and large strings, not
// the file size: every line is walked once and nothing of it is kept but
// counters and 64-bit hashes.
package space

import (
	"hash/maphash"
	"sort"
	"strings"
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
	Lines          int
	Bytes          int64 // content bytes (decompressed)

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

	// set while walking one record
	rec       *rollout.Record // the line, when its ranges can be planned
	bulkOK    bool            // a response item or event: before-turn may empty its strings
	inOutput  string          // call_id of the tool output being walked
	execID    string          // id of the item_completed CommandExecution being walked
	execField bool
	execCut   Cut
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
		repeats: map[uint64]*Repeat{}, outputs: map[string][]uint64{},
	}
}

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
			a.object(&sub, int64(p[1]-p[0]))
		}
		a.bucket(a.byType, "(concatenated line)", size-sumParts(rec.Parts))
		return
	default:
		a.bucket(a.byType, "("+rec.Shape.String()+" line)", size)
		a.bucket(a.byClass, "("+rec.Shape.String()+" line)", size)
		return
	}
	a.object(rec, size)
}

func sumParts(parts [][2]int) int64 {
	var n int64
	for _, p := range parts {
		n += int64(p[1] - p[0])
	}
	return n
}

// object walks one JSON object record of size bytes (with its terminator).
func (a *Account) object(rec *rollout.Record, size int64) {
	typ := rec.Type()
	payload := rec.PayloadBytes()
	root, kind := typ, typ
	if payload == nil {
		// bare era: the line is the item
		root, kind = typ, "(bare) "+typ
		if typ == "" {
			root, kind = "(bare) session", "(bare) session"
		}
	} else if typ == rollout.TypeResponseItem || typ == rollout.TypeEventMsg {
		if pt := payloadType(payload); pt != "" {
			root, kind = pt, typ+"/"+pt
		}
	}
	a.bucket(a.byType, kind, size)

	a.leafSum = 0
	a.rec = nil
	if a.opts.Plan && rec.Shape == rollout.ShapeObject && rec.Raw != nil && len(rec.Parts) == 0 {
		a.rec = rec
	}
	// Messages are kept whole: compactions copy them (ids and all) into
	// the history resume reads, and a changed early copy would read as a
	// duplicate id.
	a.bulkOK = typ == rollout.TypeEventMsg ||
		(typ == rollout.TypeResponseItem && payload != nil && payloadType(payload) != "message" && payloadType(payload) != "agent_message")
	if payload == nil {
		a.path = append(a.path[:0], root...)
		a.value(rec.Raw, 0, len(rec.Raw), 0)
	} else {
		rollout.Members(rec.Raw, func(key []byte, start, end int) bool {
			if string(key) == "payload" {
				a.path = append(a.path[:0], root...)
				a.payload(typ, rec.Raw[start:end])
			} else {
				a.leaf(envelope, int64(end-start))
			}
			return true
		})
	}
	if rest := size - a.leafSum; rest > 0 {
		a.bucket(a.byClass, structure, rest)
	}

	switch typ {
	case rollout.TypeCompacted:
		c := compaction{line: rec.Line}
		rollout.Members(payload, func(key []byte, start, end int) bool {
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
	case rollout.TypeEventMsg:
		if payloadType(payload) == "thread_rolled_back" {
			a.file.Rollbacks = append(a.file.Rollbacks, rec.Line)
		}
		if payloadType(payload) == "thread_rolled_back" && len(a.compactions) > 0 {
			a.rollbackLast = true
		}
	case rollout.TypeSessionMeta:
		if a.file.ThreadID == "" {
			a.meta(payload)
		}
	}
}

// payload walks a payload, noting the tool outputs and command executions
// that duplicate-exec-output compares.
func (a *Account) payload(typ string, p []byte) {
	a.inOutput, a.execID = "", ""
	pt := payloadType(p)
	switch {
	case typ == rollout.TypeResponseItem && rollout.IsToolOutput(pt):
		a.inOutput = memberString(p, "call_id")
	case typ == rollout.TypeEventMsg && pt == "item_completed":
		var item []byte
		rollout.Members(p, func(key []byte, start, end int) bool {
			if string(key) == "item" {
				item = p[start:end]
			}
			return true
		})
		if payloadType(item) == "CommandExecution" {
			a.execID = memberString(item, "id")
		}
	}
	a.value(p, 0, len(p), 1)
	a.inOutput, a.execID = "", ""
}

func (a *Account) meta(p []byte) {
	a.file.ThreadID = memberString(p, "id")
	a.file.ParentThreadID = memberString(p, "parent_thread_id")
	if a.file.ParentThreadID != "" {
		return
	}
	// Sub-agents name their parent in source.subagent.thread_spawn
	// (codex-rs/protocol SessionSource::SubAgent(SubAgentSource::ThreadSpawn)).
	src := member(p, "source")
	if sub := member(src, "subagent"); sub != nil {
		a.file.ParentThreadID = memberString(member(sub, "thread_spawn"), "parent_thread_id")
	}
}

// value walks raw[start:end], a JSON value at the class in a.path.
func (a *Account) value(raw []byte, start, end, depth int) {
	v := raw[start:end]
	if len(v) == 0 {
		return
	}
	if depth >= maxDepth || (v[0] != '{' && v[0] != '[') {
		a.scalar(v)
		return
	}
	n := len(a.path)
	if v[0] == '{' {
		rollout.Members(v, func(key []byte, s, e int) bool {
			a.path = append(a.path[:n], '.')
			a.appendKey(key)
			isExec := a.execID != "" && depth == 2 && isExecOutputField(key)
			a.execField = isExec
			if isExec && a.rec != nil {
				a.execCut = memberCut(a.rec, v, key, s, e)
			}
			a.value(v, s, e, depth+1)
			a.execField = false
			return true
		})
	} else {
		a.path = append(a.path[:n], "[]"...)
		rollout.Elements(v, func(s, e int) bool {
			a.path = append(a.path[:n], "[]"...)
			a.value(v, s, e, depth+1)
			return true
		})
	}
	a.path = a.path[:n]
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
	a.leaf(string(a.path), size)
	if v[0] != '"' {
		return
	}
	if a.rec != nil && a.bulkOK && len(v) >= BulkMin && bulkClass(a.path) {
		at := posIn(a.rec.Raw, v)
		a.file.Bulk = append(a.file.Bulk, Cut{Policy: PolicyBeforeTurn, Line: a.rec.Line, LineOffset: a.rec.Offset,
			Start: at, End: at + len(v), Repl: `""`, Path: string(a.path)})
	}
	large := len(v) >= a.opts.MinRepeat
	if !large && a.inOutput == "" && !a.execField {
		return
	}
	h := maphash.Bytes(a.seed, v)
	if a.inOutput != "" {
		a.outputs[a.inOutput] = append(a.outputs[a.inOutput], h)
	}
	if a.execField {
		a.exec = append(a.exec, execOutput{callID: a.execID, hash: h, size: size, cut: a.execCut})
		a.execCut = Cut{}
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

func (a *Account) leaf(class string, size int64) {
	a.leafSum += size
	a.bucket(a.byClass, class, size)
}

func (a *Account) bucket(m map[string]*Bucket, name string, size int64) {
	b := m[name]
	if b == nil {
		if len(m) >= maxClasses {
			a.file.ClassesCapped = true
			name = otherClass
			if b = m[name]; b != nil {
				b.Bytes += size
				b.Count++
				return
			}
		}
		b = &Bucket{Name: name}
		m[name] = b
	}
	b.Bytes += size
	b.Count++
}

// Finish closes the account. classes receives every path class of the file
// (for run-wide totals); the File keeps only the Top ones.
func (a *Account) Finish() (*File, []Bucket) {
	f := &a.file
	f.ByType = sorted(a.byType)
	all := sorted(a.byClass)
	f.ByClass = all[:min(len(all), a.opts.Top)]

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
	f.Repeats = reps[:min(len(reps), a.opts.Top)]

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
	p := string(path)
	if strings.HasSuffix(p, ".images[]") {
		return true
	}
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return false
	}
	return bulkKeys[strings.TrimSuffix(p[i+1:], "[]")]
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

// memberCut is the range that removes member key (at [s,e) of obj) with one
// of its separating commas, so the object stays valid JSON.
func memberCut(rec *rollout.Record, obj, key []byte, s, e int) Cut {
	raw := rec.Raw
	start := posIn(raw, key) - 1 // the key's opening quote
	end := posIn(raw, obj) + e
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

func payloadType(p []byte) string { return memberString(p, "type") }
