package space

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/codex/forest"
)

// Summary aggregates the accounts of many files: totals by record type and
// path class, the largest files and repeated strings, parent and sub-agent
// trees, and what each reclaim policy would free. Files must be added in a
// stable order for the output to be stable.
//
// It keeps fixed-size tables and, per file, only what the tree table needs
// (ids, sizes, path): the per-file rows go to a spool (an unlinked temporary
// file, else memory) that EachFile reads back, so a run over 50,000
// rollouts does not hold 50,000 Files. Close releases the spool.
type Summary struct {
	Top int
	// ColdAfter and KeepTurns are the settings of the compress and
	// before-turn estimates, named when they free nothing.
	ColdAfter time.Duration
	KeepTurns int

	Files     int // files added
	Bytes     int64
	DiskBytes int64
	Lines     int64
	byType    map[string]*Bucket
	byClass   map[string]*Bucket
	attached  map[string]string // thread id -> the thread it is attached to (Attach)

	largest []*File         // the Top by DiskBytes, ties in the order added
	repeats []LocatedRepeat // the Top by bytes wasted, ties in the order added
	nodes   []treeNode      // one per file, in the order added
	freed   []PolicyFree    // per Policies entry: bytes and files
	why     whyStats
	spool   spool
}

// treeNode is what Trees needs of a file.
type treeNode struct {
	id, parent, attachedTo string
	path                   string
	disk, bytes            int64
}

// whyStats are what whyNothing says, gathered as files are added.
type whyStats struct {
	plain, cold     int
	idlest          time.Duration
	mostCompactions int
	rolledBack      int
	mostUserTurns   int
}

// Attach adds attached-thread edges (thread id -> the thread it is
// attached to) from a Codex home's threads index (attached_thread_parent_id)
// for the files whose session_meta names no parent.
func (s *Summary) Attach(edges map[string]string) {
	if s.attached == nil {
		s.attached = map[string]string{}
	}
	for c, p := range edges {
		s.attached[strings.ToLower(c)] = strings.ToLower(p)
	}
}

// NewSummary starts an aggregate keeping top rows per table.
func NewSummary(top int) *Summary {
	if top <= 0 {
		top = DefaultTop
	}
	s := &Summary{Top: top, byType: map[string]*Bucket{}, byClass: map[string]*Bucket{}}
	for _, p := range Policies {
		s.freed = append(s.freed, PolicyFree{Policy: p.Name, GivesUp: p.GivesUp})
	}
	return s
}

// Add merges one file's account; classes is every path class of the file.
func (s *Summary) Add(f *File, classes []Bucket) {
	s.Files++
	s.Bytes += f.Bytes
	s.DiskBytes += f.DiskBytes
	s.Lines += int64(f.Lines)
	for _, b := range f.ByType {
		merge(s.byType, b)
	}
	for _, b := range classes {
		merge(s.byClass, b)
	}
	s.largest = insertTop(s.largest, f, s.Top, func(f *File) int64 { return f.DiskBytes })
	for _, r := range f.Repeats {
		s.repeats = insertTop(s.repeats, LocatedRepeat{r, f.Path}, s.Top, LocatedRepeat.Wasted)
	}
	s.nodes = append(s.nodes, treeNode{id: f.ThreadID, parent: f.ParentThreadID, attachedTo: f.AttachedTo,
		path: f.Path, disk: f.DiskBytes, bytes: f.Bytes})
	for i := range s.freed {
		if n := f.Freed(s.freed[i].Policy); n > 0 {
			s.freed[i].Bytes += n
			s.freed[i].Files++
		}
	}
	w := &s.why
	if !f.Compressed {
		w.plain++
		if f.Cold {
			w.cold++
		}
		w.idlest = max(w.idlest, f.Idle)
	}
	w.mostCompactions = max(w.mostCompactions, f.Compactions)
	if f.RollbackAfterCheckpoint {
		w.rolledBack++
	}
	w.mostUserTurns = max(w.mostUserTurns, f.UserTurns)
	s.spool.add(f)
}

// insertTop inserts v into top (sorted by key, largest first, ties in the
// order inserted) and keeps at most n: what a stable sort of everything
// inserted, cut to n, would be.
func insertTop[T any](top []T, v T, n int, key func(T) int64) []T {
	k := key(v)
	i := len(top)
	for i > 0 && key(top[i-1]) < k {
		i--
	}
	if i >= n {
		return top
	}
	top = slices.Insert(top, i, v)
	return top[:min(len(top), n)]
}

// EachFile calls fn with each file added, in the order added: the rows of
// the per-file reports, read back from the spool (each File has what Add
// was given, but Cuts, Bulk and Checkpoints).
func (s *Summary) EachFile(fn func(*File) error) error { return s.spool.each(fn) }

// Close releases the spool of per-file rows.
func (s *Summary) Close() error { return s.spool.close() }

// mergeLimit bounds the run-wide class table as maxClasses bounds a file's.
const mergeLimit = 4 * maxClasses

func merge(m map[string]*Bucket, b Bucket) {
	t := m[b.Name]
	if t == nil {
		if len(m) >= mergeLimit {
			b.Name = otherClass
			if t = m[b.Name]; t == nil {
				t = &Bucket{Name: b.Name}
				m[b.Name] = t
			}
		} else {
			t = &Bucket{Name: b.Name}
			m[b.Name] = t
		}
	}
	t.Bytes += b.Bytes
	t.Count += b.Count
}

// ByType is every record type over all files, largest first.
func (s *Summary) ByType() []Bucket { return sorted(s.byType) }

// ByClass is the Top path classes over all files.
func (s *Summary) ByClass() []Bucket {
	all := sorted(s.byClass)
	return all[:min(len(all), s.Top)]
}

// LocatedRepeat is a repeated string with the file it is in.
type LocatedRepeat struct {
	Repeat
	Path string `json:"path"`
}

// Repeats is the Top repeated strings over all files by bytes wasted.
func (s *Summary) Repeats() []LocatedRepeat { return slices.Clone(s.repeats) }

// Largest is the Top files by bytes on disk.
func (s *Summary) Largest() []*File { return slices.Clone(s.largest) }

// Tree is a thread with the sub-agents it spawned and the threads
// attached to it (side conversations), transitively, among the files read.
type Tree struct {
	Root      *File // its Path, ThreadID, ParentThreadID, DiskBytes and Bytes
	Files     int   // the root and its descendants
	DiskBytes int64 // summed over them
	Bytes     int64
}

// Trees groups files by their root thread among the files read (see
// package forest: a cycle of parent links is one tree). A file's parent is
// the thread that spawned it, else the one it is attached to (its
// session_meta's, else Attach's). Only trees of more than one file are
// returned, largest first.
func (s *Summary) Trees() []Tree {
	nodes := make([]forest.Node, len(s.nodes))
	for i, n := range s.nodes {
		parent := n.parent
		if parent == "" {
			parent = n.attachedTo
		}
		if parent == "" {
			parent = s.attached[strings.ToLower(n.id)]
		}
		nodes[i] = forest.Node{ID: n.id, Parent: parent}
	}
	trees := forest.New(nodes)
	var out []Tree
	for _, members := range trees.Trees() {
		if len(members) < 2 {
			continue
		}
		r := s.nodes[trees.Root(members[0])]
		t := Tree{Root: &File{Path: r.path, ThreadID: r.id, ParentThreadID: r.parent, DiskBytes: r.disk, Bytes: r.bytes}, Files: len(members)}
		for _, i := range members {
			t.DiskBytes += s.nodes[i].disk
			t.Bytes += s.nodes[i].bytes
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DiskBytes > out[j].DiskBytes })
	return out[:min(len(out), s.Top)]
}

// PolicyFree is what one reclaim policy would free over all files.
type PolicyFree struct {
	Policy string `json:"policy"`
	// N is before-turn's N (--keep-turns); 0 for the other policies.
	N     int   `json:"n,omitempty"`
	Bytes int64 `json:"bytes"`
	Files int   `json:"files"`
	// GivesUp says what applying the policy costs.
	GivesUp string `json:"gives_up"`
	// Why says, when the policy frees nothing, why and what would
	// change it; "" when it frees something.
	Why string `json:"why,omitempty"`
}

// Arg is the policy as reclaim --policy takes it: before-turn=N.
func (p PolicyFree) Arg() string {
	if p.N > 0 {
		return fmt.Sprintf("%s=%d", p.Policy, p.N)
	}
	return p.Policy
}

// Policies are the reclaim policies, with what they give up.
var Policies = []struct{ Name, GivesUp string }{
	{PolicyCompress, "nothing: Codex reads .jsonl.zst rollouts as they are"},
	{PolicySupersededCheckpoints, "rolling back past the newest compaction"},
	{PolicyDuplicateExecOutput, "the command output a client shows when it re-opens the thread (the model's history keeps the tool output)"},
	{PolicyBeforeTurn, "rolling back more than N user turns, forking before the compaction those turns fall back to, and that old content in a client's transcript"},
}

// Freed is what a policy frees in one file.
func (f *File) Freed(policy string) int64 {
	switch policy {
	case PolicyCompress:
		if f.CompressedBytes > 0 && f.CompressedBytes < f.DiskBytes {
			return f.DiskBytes - f.CompressedBytes
		}
	case PolicySupersededCheckpoints:
		return f.SupersededCheckpoints
	case PolicyDuplicateExecOutput:
		return f.DuplicateExecOutput
	case PolicyBeforeTurn:
		return f.BeforeTurnFree
	}
	return 0
}

// Reclaimable is what each policy would free over all files.
func (s *Summary) Reclaimable() []PolicyFree {
	out := slices.Clone(s.freed)
	for i, pf := range out {
		if pf.Policy == PolicyBeforeTurn {
			out[i].N = s.KeepTurns
		}
		if pf.Bytes == 0 {
			out[i].Why = s.whyNothing(pf.Policy)
		}
	}
	return out
}

// whyNothing says why a policy frees nothing in any file, and what would
// change that.
func (s *Summary) whyNothing(policy string) string {
	if s.Files == 0 {
		return "no rollout was read"
	}
	w := s.why
	switch policy {
	case PolicyCompress:
		switch {
		case w.plain == 0:
			return "every rollout is already compressed (.zst)"
		case w.cold == 0:
			return fmt.Sprintf("every plain rollout was written less than --cold-after %s ago (the least recent %s ago); a smaller --cold-after would count them",
				Age(s.ColdAfter), Age(w.idlest))
		}
		return "zstd would not make the cold rollouts smaller"
	case PolicySupersededCheckpoints:
		if w.rolledBack > 0 {
			return fmt.Sprintf("in %d rollout(s) a rollback follows the newest compaction, which could bring an older checkpoint back", w.rolledBack)
		}
		return fmt.Sprintf("no rollout has a compaction superseded by a later one (the most compactions in one is %d; two are needed)", w.mostCompactions)
	case PolicyDuplicateExecOutput:
		return "no command output is stored twice (an item_completed output equal to its call's tool output)"
	case PolicyBeforeTurn:
		if w.mostUserTurns <= s.KeepTurns {
			return fmt.Sprintf("no rollout has more than N = %d user turns (--keep-turns; the most is %d): a smaller N would let a rollback undo fewer turns and free what is before them", s.KeepTurns, w.mostUserTurns)
		}
		return fmt.Sprintf("no rollout has a compaction before its last N = %d user turns (--keep-turns) that a later rollback could not undo: a smaller N reaches further back", s.KeepTurns)
	}
	return ""
}

// Age writes a duration as --cold-after takes it: 7d, 36h, 5m, 0s.
func Age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// CompressCounter is an io.Writer that zstd-compresses what it is given and
// counts the compressed bytes, for the compress policy's estimate.
type CompressCounter struct {
	enc *zstd.Encoder
	n   counter
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// newCompressCounter starts an estimate at zstd's default level (3).
func newCompressCounter() *CompressCounter {
	c := &CompressCounter{}
	c.enc, _ = zstd.NewWriter(&c.n, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	return c
}

func (c *CompressCounter) Write(p []byte) (int, error) { return c.enc.Write(p) }

// Size ends the stream and returns the compressed size.
func (c *CompressCounter) Size() int64 {
	c.enc.Close()
	return c.n.n
}

var _ io.Writer = (*CompressCounter)(nil)
