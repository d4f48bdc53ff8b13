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

// TestReplayLeavesOutUnknownItemTypes: a response_item of a type no Codex
// knows is not history (Codex sends none: conformance corrupt/
// unknown-item-type), and the state says which lines it left out.
func TestReplayLeavesOutUnknownItemTypes(t *testing.T) {
	data, err := os.ReadFile(paginated)
	if err != nil {
		t.Fatal(err)
	}
	base, err := reconstruct.Replay(bytes.NewReader(data), reconstruct.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	extra := `{"timestamp":"2026-09-09T04:03:05.000Z","ordinal":32,"type":"response_item","payload":{"type":"future_item","id":"fi_1"}}` + "\n" +
		`{"timestamp":"2026-09-09T04:03:05.000Z","ordinal":33,"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}` + "\n"
	st, err := reconstruct.Replay(bytes.NewReader(append(slices.Clip(data), extra...)), reconstruct.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.History.Len(), base.History.Len()+1; got != want {
		t.Errorf("history has %d items, want %d (the message, not the future_item)", got, want)
	}
	if last := st.History.At(st.History.Len() - 1); last.Type != "message" {
		t.Errorf("last item %s, want the message", last.Type)
	}
	want := []reconstruct.LeftOutItem{{Line: 33, Type: "future_item"}}
	if diff := cmp.Diff(want, st.LeftOut); diff != "" || st.LeftOutCount != 1 {
		t.Errorf("LeftOut (-want +got):\n%s\ncount %d", diff, st.LeftOutCount)
	}
	if base.LeftOutCount != 0 || base.LeftOut != nil {
		t.Errorf("a clean file left out %d items", base.LeftOutCount)
	}
}
