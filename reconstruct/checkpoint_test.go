package reconstruct_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// checkpointsRollout is a rollout of items reasoning items, each followed
// by a world-state patch adding a key, cut into turns of perTurn items
// (every turn start is a rollback checkpoint).
func checkpointsRollout(items, perTurn int) []byte {
	var b bytes.Buffer
	ts := `{"timestamp":"2026-04-07T09:00:00.000Z","type":`
	fmt.Fprintf(&b, `%s"session_meta","payload":{"id":"019d672b-8a9f-7d05-9c98-7f806230a13c","timestamp":"2026-04-07T09:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.110.0"}}`+"\n", ts)
	fmt.Fprintf(&b, `%s"world_state","payload":{"full":true,"state":{"open_files":{}}}}`+"\n", ts)
	for i := range items {
		if i%perTurn == 0 {
			if i > 0 {
				fmt.Fprintf(&b, `%s"event_msg","payload":{"type":"task_complete","turn_id":"t%d"}}`+"\n", ts, i)
			}
			fmt.Fprintf(&b, `%s"event_msg","payload":{"type":"task_started","turn_id":"t%d"}}`+"\n", ts, i)
			fmt.Fprintf(&b, `%s"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"turn %d"}]}}`+"\n", ts, i)
		}
		fmt.Fprintf(&b, `%s"response_item","payload":{"type":"reasoning","id":"rs_%08d","summary":[{"type":"summary_text","text":"step %d of a long task"}]}}`+"\n", ts, i, i)
		fmt.Fprintf(&b, `%s"world_state","payload":{"full":false,"state":{"open_files":{"src/file%08d.go":{"lines":%d}}}}}`+"\n", ts, i, i)
	}
	return b.Bytes()
}

// liveHeapAtEnd replays data and returns the live heap while the engine
// holds every turn's checkpoint (just before the last line).
func liveHeapAtEnd(t *testing.T, data []byte) uint64 {
	lines := bytes.Count(data, []byte("\n"))
	var heap uint64
	opts := reconstruct.ReplayOptions{OnRecord: func(r *rollout.Record) {
		if r.Line == lines {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
	}}
	if _, err := reconstruct.Replay(bytes.NewReader(data), opts); err != nil {
		t.Fatal(err)
	}
	return heap
}

// TestCheckpointsShareStructure: a rollback checkpoint per turn holds the
// history and the world state of its time by sharing them with the live
// state, so a turn costs a small constant, not a copy of the history and
// the world state as they stood (here on average 5,000 items and keys).
func TestCheckpointsShareStructure(t *testing.T) {
	const items, few, many = 10000, 100, 1000
	fewTurns := checkpointsRollout(items, items/few)
	manyTurns := checkpointsRollout(items, items/many)
	base, heap := liveHeapAtEnd(t, fewTurns), liveHeapAtEnd(t, manyTurns)
	t.Logf("live heap: %d turns %d KiB, %d turns %d KiB", few, base>>10, many, heap>>10)
	if budget := base + (many-few)*2048; heap > budget {
		t.Errorf("%d turns keep %d KiB alive, %d turns %d KiB: over 2 KiB a turn", many, heap>>10, few, base>>10)
	}
}
