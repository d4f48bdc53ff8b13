package reconstruct

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/rollout"
)

// TestPrefixMemoReplaysOnce: along a fork chain replayed in order with a
// memo, each rollout's prefix is restored and only its parent is read as a
// segment; without one, every ancestor is read again for each rollout.
func TestPrefixMemoReplaysOnce(t *testing.T) {
	const depth = 12
	tree := lineagegen.Tree{{Name: "n0", Kind: "root", Turns: 2}}
	for i := 1; i < depth; i++ {
		tree = append(tree, lineagegen.Node{Name: fmt.Sprintf("n%d", i), Kind: "fork", Parent: fmt.Sprintf("n%d", i-1), Cut: -1, Turns: 2})
	}
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, tree)
	if err != nil {
		t.Fatal(err)
	}
	chain := make([]*lineagegen.File, depth)
	for i := range chain {
		chain[i] = files[fmt.Sprintf("n%d", i)]
	}
	// The segments of rollout k: every ancestor, cut where its child's
	// history_base cuts it (at its end: Cut -1).
	segments := func(k int) []Segment {
		var segs []Segment
		for j := range k {
			f := chain[j]
			segs = append(segs, Segment{Path: filepath.Join(dir, f.Path), RolloutID: f.Rollout, End: f.Size, EndOrdinal: f.Ordinals})
		}
		return segs
	}
	run := func(memo *PrefixMemo) (opens int, lens []int, requests []int64) {
		for k := 1; k < depth; k++ {
			open := func(p string, prefix int64) (io.ReadCloser, error) {
				opens++
				return rollout.OpenWith(p, nil, rollout.OpenOptions{Prefix: prefix})
			}
			e := newEngine(Options{}, nil)
			if err := replaySegments(e, &Ancestry{Segments: segments(k), Memo: memo}, open, 0); err != nil {
				t.Fatal(err)
			}
			lens = append(lens, e.st.History.Len())
			if e.st.Tokens != nil {
				requests = append(requests, int64(e.st.Tokens.RequestsSeen))
				// What the rollout's own token counts do next: a snapshot
				// taken of the prefix must not see it.
				e.mutableTokens().RequestsSeen = -1000
			}
			if len(e.pendingLineage) > 0 {
				t.Fatalf("rollout %d: %v", k, e.pendingLineage)
			}
		}
		return opens, lens, requests
	}
	plainOpens, plainLens, plainRequests := run(nil)
	memoOpens, memoLens, memoRequests := run(NewPrefixMemo(0))
	if want := depth * (depth - 1) / 2; plainOpens != want {
		t.Errorf("without a memo: %d segments read, want %d", plainOpens, want)
	}
	if want := depth - 1; memoOpens != want {
		t.Errorf("with a memo: %d segments read, want %d (one per rollout)", memoOpens, want)
	}
	if fmt.Sprint(plainLens) != fmt.Sprint(memoLens) {
		t.Errorf("history lengths %v with a memo, %v without", memoLens, plainLens)
	}
	if len(plainRequests) != depth-1 || fmt.Sprint(plainRequests) != fmt.Sprint(memoRequests) {
		t.Errorf("requests seen %v with a memo, %v without", memoRequests, plainRequests)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

// TestPrefixMemoBudget: the least recently used snapshots go first, and
// the newest stays even alone over the budget.
func TestPrefixMemoBudget(t *testing.T) {
	e := newEngine(Options{}, nil)
	for i := range 10 {
		e.st.History.append(Item{ID: fmt.Sprintf("msg_%d", i), Type: "message", Line: i + 1})
	}
	seg := func(p string) []Segment { return []Segment{{Path: p, End: 1}} }
	w := e.weight()
	m := NewPrefixMemo(2*w + w/2) // room for two
	m.store(e.opts, 0, seg("a"), e)
	m.store(e.opts, 0, seg("b"), e)
	if n, _ := m.longest(e.opts, 0, seg("a")); n != 1 {
		t.Fatalf("a not kept")
	}
	m.store(e.opts, 0, seg("c"), e)                             // evicts b, the least recently used
	e.st.History.append(Item{ID: "msg_after", Type: "message"}) // not seen by the snapshot
	if n, _ := m.longest(e.opts, 0, seg("b")); n != 0 {
		t.Errorf("b kept past the budget")
	}
	if n, snap := m.longest(e.opts, 0, seg("c")); n != 1 || snap.st.History.Len() != 10 {
		t.Errorf("c: %d, want the 10 items", n)
	}
	small := NewPrefixMemo(w - 1)
	small.store(e.opts, 0, seg("a"), e)
	small.store(e.opts, 0, seg("b"), e)
	if n, _ := small.longest(e.opts, 0, seg("a")); n != 0 {
		t.Errorf("a kept beside b over the budget")
	}
	if n, _ := small.longest(e.opts, 0, seg("b")); n != 1 {
		t.Errorf("the newest snapshot, alone over the budget, was not kept")
	}
}

// TestPrefixMemoWeighsWorldState: a snapshot weighs the world state it
// holds. Small sessions hold a parsed world state of some 20 KB each: a
// weight without it kept nine times the budget over a home of 50,000
// rollouts.
func TestPrefixMemoWeighsWorldState(t *testing.T) {
	e := newEngine(Options{}, nil)
	bare := e.weight()
	state := `{"notes":"` + strings.Repeat("x", 1<<20) + `"}`
	v, err := mergepatch.ParseString(state)
	if err != nil {
		t.Fatal(err)
	}
	e.st.WorldState = v
	if w := e.weight(); w-bare < len(state) {
		t.Errorf("a world state of %d bytes adds %d to the weight", len(state), w-bare)
	}
	m := NewPrefixMemo(3 << 20)
	for i := range 10 {
		m.store(e.opts, 0, []Segment{{Path: fmt.Sprint(i), End: 1}}, e)
	}
	if len(m.entries) > 3 {
		t.Errorf("%d snapshots of a 1 MiB world state kept in a 3 MiB budget", len(m.entries))
	}
}
