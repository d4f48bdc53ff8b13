package space

import (
	"fmt"
	"io"
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
type Summary struct {
	Top int
	// ColdAfter and KeepTurns are the settings of the compress and
	// before-turn estimates, named when they free nothing.
	ColdAfter time.Duration
	KeepTurns int

	Files     []*File // every file, in the order added (each is small)
	Bytes     int64
	DiskBytes int64
	Lines     int64
	byType    map[string]*Bucket
	byClass   map[string]*Bucket
	attached  map[string]string // thread id -> the thread it is attached to (Attach)
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
	return &Summary{Top: top, byType: map[string]*Bucket{}, byClass: map[string]*Bucket{}}
}

// Add merges one file's account; classes is every path class of the file.
func (s *Summary) Add(f *File, classes []Bucket) {
	s.Files = append(s.Files, f)
	s.Bytes += f.Bytes
	s.DiskBytes += f.DiskBytes
	s.Lines += int64(f.Lines)
	for _, b := range f.ByType {
		merge(s.byType, b)
	}
	for _, b := range classes {
		merge(s.byClass, b)
	}
}

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
func (s *Summary) Repeats() []LocatedRepeat {
	var out []LocatedRepeat
	for _, f := range s.Files {
		for _, r := range f.Repeats {
			out = append(out, LocatedRepeat{r, f.Path})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Wasted() > out[j].Wasted() })
	return out[:min(len(out), s.Top)]
}

// Largest is the Top files by bytes on disk.
func (s *Summary) Largest() []*File {
	out := append([]*File(nil), s.Files...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].DiskBytes > out[j].DiskBytes })
	return out[:min(len(out), s.Top)]
}

// Tree is a thread with the sub-agents it spawned and the threads
// attached to it (side conversations), transitively, among the files read.
type Tree struct {
	Root      *File
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
	nodes := make([]forest.Node, len(s.Files))
	for i, f := range s.Files {
		parent := f.ParentThreadID
		if parent == "" {
			parent = f.AttachedTo
		}
		if parent == "" {
			parent = s.attached[strings.ToLower(f.ThreadID)]
		}
		nodes[i] = forest.Node{ID: f.ThreadID, Parent: parent}
	}
	trees := forest.New(nodes)
	var out []Tree
	for _, members := range trees.Trees() {
		if len(members) < 2 {
			continue
		}
		t := Tree{Root: s.Files[trees.Root(members[0])], Files: len(members)}
		for _, i := range members {
			t.DiskBytes += s.Files[i].DiskBytes
			t.Bytes += s.Files[i].Bytes
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
	var out []PolicyFree
	for _, p := range Policies {
		pf := PolicyFree{Policy: p.Name, GivesUp: p.GivesUp}
		if p.Name == PolicyBeforeTurn {
			pf.N = s.KeepTurns
		}
		for _, f := range s.Files {
			if n := f.Freed(p.Name); n > 0 {
				pf.Bytes += n
				pf.Files++
			}
		}
		if pf.Bytes == 0 {
			pf.Why = s.whyNothing(p.Name)
		}
		out = append(out, pf)
	}
	return out
}

// whyNothing says why a policy frees nothing in any file, and what would
// change that.
func (s *Summary) whyNothing(policy string) string {
	if len(s.Files) == 0 {
		return "no rollout was read"
	}
	switch policy {
	case PolicyCompress:
		var plain, cold int
		var idlest time.Duration
		for _, f := range s.Files {
			if f.Compressed {
				continue
			}
			plain++
			if f.Cold {
				cold++
			}
			idlest = max(idlest, f.Idle)
		}
		switch {
		case plain == 0:
			return "every rollout is already compressed (.zst)"
		case cold == 0:
			return fmt.Sprintf("every plain rollout was written less than --cold-after %s ago (the least recent %s ago); a smaller --cold-after would count them",
				Age(s.ColdAfter), Age(idlest))
		}
		return "zstd would not make the cold rollouts smaller"
	case PolicySupersededCheckpoints:
		most, rolledBack := 0, 0
		for _, f := range s.Files {
			most = max(most, f.Compactions)
			if f.RollbackAfterCheckpoint {
				rolledBack++
			}
		}
		if rolledBack > 0 {
			return fmt.Sprintf("in %d rollout(s) a rollback follows the newest compaction, which could bring an older checkpoint back", rolledBack)
		}
		return fmt.Sprintf("no rollout has a compaction superseded by a later one (the most compactions in one is %d; two are needed)", most)
	case PolicyDuplicateExecOutput:
		return "no command output is stored twice (an item_completed output equal to its call's tool output)"
	case PolicyBeforeTurn:
		most := 0
		for _, f := range s.Files {
			most = max(most, f.UserTurns)
		}
		if most <= s.KeepTurns {
			return fmt.Sprintf("no rollout has more than N = %d user turns (--keep-turns; the most is %d): a smaller N would let a rollback undo fewer turns and free what is before them", s.KeepTurns, most)
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
