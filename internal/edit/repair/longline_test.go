package repair

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A long line costs about its own size once per copy that must exist
// (issue 11): repairing a file whose 20 MB line needs a fix reads the line
// (analysis), reads it again and makes its fixed copy (rewrite), and
// verifies that copy as it is written. Each of those grew its own buffers
// and the verifier copied the output again: about 15 times the line. Now
// the rewrite reuses the analysis buffer and the verifier the fixed line:
// about 2.5 times (3.2 with -o, whose copy of the input and output pieces
// are queued; one more when the collector runs between the passes). The
// test must not run in parallel with others: what they allocate would
// count.
func TestRepairLongLineAllocations(t *testing.T) {
	const line = 20 << 20
	src := read(t, "../../../fixtures/clean/envelope-paginated.jsonl")
	lines := strings.SplitAfter(string(src), "\n")
	const at = 8 // a function_call_output with an id
	if !strings.Contains(lines[at], `"type":"function_call_output","id":"fco_`) {
		t.Fatalf("fixture line %d is not a function_call_output with id: %.100s", at+1, lines[at])
	}
	// Without its id (item/missing-id, fixed on the long line) and with
	// a 20 MB output.
	l := lines[at]
	i := strings.Index(l, `"id":"fco_`)
	j := i + strings.Index(l[i:], `",`) + 2
	l = l[:i] + l[j:]
	k := strings.Index(l, `"output":"`) + len(`"output":"`)
	lines[at] = l[:k] + strings.Repeat("o", line) + l[k:]
	p := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, write := range []bool{false, true} {
		opts := options(p)
		opts.Write = write
		if write {
			opts.Output = filepath.Join(t.TempDir(), "out.jsonl")
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, err := run(t, opts)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if out.Changes.Len() != 1 || out.Changes.At(0).Rule != "item/missing-id" || out.Changes.At(0).Line != at+1 {
			t.Fatalf("write %v: changes %+v, want item/missing-id on line %d", write, out.Changes, at+1)
		}
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("write %v: %.1f MiB allocated", write, float64(got)/(1<<20))
		if got > line*4 {
			t.Errorf("write %v: repairing a file with a %d MiB line allocated %.1f MiB, want at most 4 times the line",
				write, line>>20, float64(got)/(1<<20))
		}
	}
}
