package reconstruct_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
)

// FuzzEngine feeds arbitrary bytes through the reader, the replay engine and
// the rule catalog: bad input must become findings, never a panic (which
// the driver turns into *reconstruct.InternalError) or any other error.
//
// The committed corpus in testdata/fuzz/FuzzEngine holds the three sample
// eras and mutations of them (torn, truncated, reordered, duplicated,
// rolled back, compacted, concatenated lines...). A first byte of 0xff asks
// for a 64-byte maximum line size, and one of 0xfe for a replay stopped after
// line 3, to reach the oversized and --at-line paths.
func FuzzEngine(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"019cae52-3c1a-7b40-9d2e-5f1a2b3c4d5e"}}` + "\n" +
		`{"timestamp":"2026-01-01T00:00:00.001Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := reconstruct.ReplayOptions{Options: reconstruct.Options{Path: "rollout-fuzz.jsonl"}}
		if len(data) > 0 {
			switch data[0] {
			case 0xff:
				opts.MaxLineBytes = 64
			case 0xfe:
				opts.StopAfterLine = 3
			}
		}
		c := checks.NewChecker(opts.Path, 0)
		st, err := reconstruct.Replay(bytes.NewReader(data), opts, c.Observe)
		var res *checks.Result
		if err == nil {
			res = c.Result(st)
		}
		if err != nil {
			if ie, ok := err.(*reconstruct.InternalError); ok {
				t.Fatalf("panic at line %d: %v\n%s", ie.Line, ie.Value, ie.Stack)
			}
			t.Fatalf("error on in-memory input: %v", err)
		}
		if res == nil || res.State == nil {
			t.Fatal("nil result")
		}
		for _, fd := range res.Findings {
			if fd.Rule == "" || fd.Line < 0 || fd.ByteOffset < 0 || fd.ByteOffset > int64(len(data)) {
				t.Fatalf("finding out of range: %+v", fd)
			}
			if _, ok := checks.Lookup(fd.Rule); !ok {
				t.Fatalf("finding of unregistered rule %q", fd.Rule)
			}
		}
	})
}

// TestEngineHostileLines: lines nested deeper than any parser should follow,
// and valid ones nested just under the limit, become findings, not crashes.
func TestEngineHostileLines(t *testing.T) {
	t.Parallel()
	const meta = `{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"019cae52-3c1a-7b40-9d2e-5f1a2b3c4d5e"}}`
	deep := `{"type":"response_item","payload":` + strings.Repeat("[", 8<<20) + strings.Repeat("]", 8<<20) + `}`
	nested := `{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":` +
		strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}}`
	in := meta + "\n" + deep + "\n" + nested + "\n" + nested + deep + "\n"
	res, err := checks.RunReader("hostile.jsonl", strings.NewReader(in), checks.Options{})
	if err != nil {
		t.Fatalf("RunReader: %v", err)
	}
	invalid := map[int]bool{}
	for _, f := range res.Findings {
		if f.Rule == "line/invalid-json" {
			invalid[f.Line] = true
		}
	}
	if !invalid[2] || invalid[3] || !invalid[4] {
		t.Errorf("line/invalid-json on lines %v, want 2 and 4 (line 3 is valid)", invalid)
	}
	if res.Records != 4 {
		t.Errorf("%d records, want 4", res.Records)
	}
}
