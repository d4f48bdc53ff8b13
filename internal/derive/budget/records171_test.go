package budget

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

// Codex 0.171's compactions (the conformance goldens of real 0.171.0: a
// synchronous one in a thread with a dynamic tool, an async one, one the
// client asked for) change nothing the model counts: each compacted line
// is one recorded compaction, and the first model request after it (a
// token_count whose cumulative total grew: the one Codex writes right
// after a compaction keeps the total and carries its own estimate of the
// new fill, as every version since 0.40 does) is the recorded
// post-compaction fill.
func TestCompactionsOf171Goldens(t *testing.T) {
	t.Parallel()
	for _, sc := range []string{"dynamic-tools", "compact-async", "inject-compact"} {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			files, _ := filepath.Glob("../../testkit/conformance/testdata/0.171.0/" + sc + "/session/sessions/*/*/*/*.jsonl")
			if len(files) != 1 {
				t.Fatalf("want one rollout, found %v", files)
			}
			// The file's own account: compacted lines, and the line of the
			// first token_count after each whose total grew.
			f, err := os.Open(files[0])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var compacted, after []int
			var total int64
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<24)
			for n := 1; sc.Scan(); n++ {
				line := sc.Bytes()
				if gjson.GetBytes(line, "type").String() == "compacted" {
					compacted = append(compacted, n)
					continue
				}
				info := gjson.GetBytes(line, "payload.info")
				if gjson.GetBytes(line, "payload.type").String() != "token_count" || !info.IsObject() {
					continue
				}
				t := info.Get("total_token_usage.total_tokens").Int()
				if t > total && len(after) < len(compacted) {
					after = append(after, n)
				}
				total = max(total, t)
			}
			if len(compacted) == 0 || len(after) != len(compacted) {
				t.Fatalf("compacted lines %v, requests after them %v", compacted, after)
			}
			ev := extract(t, files[0])
			if len(ev.Compactions) != len(compacted) {
				t.Fatalf("%d compactions, the file has %d", len(ev.Compactions), len(compacted))
			}
			for i, c := range ev.Compactions {
				if c.Line != compacted[i] || c.Request >= len(ev.Requests) {
					t.Fatalf("compaction %+v, want line %d followed by a request", c, compacted[i])
				}
				r := ev.Requests[c.Request]
				if r.Line != after[i] || !r.AfterCompaction || r.Growth != 0 {
					t.Errorf("request after compaction %d: %+v, want line %d marked as the post-compaction fill", i, r, after[i])
				}
			}
		})
	}
}
