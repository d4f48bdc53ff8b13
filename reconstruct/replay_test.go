package reconstruct_test

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/reconstruct"
)

const paginated = "../fixtures/clean/envelope-paginated.jsonl"

// TestReplayFansOut: every observer sees every observation, in the same
// order.
func TestReplayFansOut(t *testing.T) {
	var a, b []reconstruct.Observation
	st, err := reconstruct.ReplayFile(paginated, nil, reconstruct.ReplayOptions{},
		func(o reconstruct.Observation) { a = append(a, o) },
		func(o reconstruct.Observation) { b = append(b, o) })
	if err != nil {
		t.Fatal(err)
	}
	if len(a) == 0 || st.Records == 0 {
		t.Fatalf("%d observations, %d records", len(a), st.Records)
	}
	if diff := cmp.Diff(a, b, cmpopts.IgnoreUnexported(mergepatch.Value{})); diff != "" {
		t.Errorf("observers saw different observations (-first +second):\n%s", diff)
	}
}

// TestReplayStopAfterLine: the state at line n is the state of the file
// cut after line n.
func TestReplayStopAfterLine(t *testing.T) {
	data, err := os.ReadFile(paginated)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, n := range []int{1, 5, 12, len(lines) - 2} {
		at, err := reconstruct.Replay(bytes.NewReader(data), reconstruct.ReplayOptions{StopAfterLine: n})
		if err != nil {
			t.Fatal(err)
		}
		cut, err := reconstruct.Replay(bytes.NewReader(bytes.Join(lines[:n], nil)), reconstruct.ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cut, at, historyItems, cmpopts.IgnoreUnexported(reconstruct.Item{}, reconstruct.Handoff{}, mergepatch.Value{})); diff != "" {
			t.Errorf("line %d: state (-cut file +stopped replay):\n%s", n, diff)
		}
	}
}

// historyItems lets cmp compare histories item by item.
var historyItems = cmp.Transformer("items", func(h *reconstruct.History) []reconstruct.Item { return slices.Collect(h.All()) })
