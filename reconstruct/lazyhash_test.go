package reconstruct_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/reconstruct"
)

// TestDuplicateIDFromFile: an item's content is hashed only when its id
// comes again, reading its line back from the file; a stream that cannot
// be read again (stdin, zstd) hashes every item as it passes. Both must
// report the same duplicates: same id with other content or another type,
// not the same item repeated, whether the first one is a payload, a whole
// bare-era line, a compacted history's element or a multi-megabyte line.
func TestDuplicateIDFromFile(t *testing.T) {
	const meta = `{"timestamp":"2026-04-07T09:00:00.000Z","type":"session_meta","payload":{"id":"019d672b-8a97-7c26-8934-98579f95cd19","cli_version":"0.110.0"}}`
	item := func(payload string) string {
		return `{"timestamp":"2026-04-07T09:00:00.001Z","type":"response_item","payload":` + payload + `}`
	}
	const (
		id1 = "msg_019d672b-8ad0-72ca-8ae3-f0c3725f6a4e"
		id2 = "fco_019d672b-8b01-799c-906d-8a21eacfa89b"
		id3 = "msg_019d672b-8ad0-72ca-8ae3-f0c3725f6a4f"
	)
	msg := func(id, text string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"role":"assistant","content":[{"type":"output_text","text":%q}]}`, id, text)
	}
	big := strings.Repeat("line of tool output\\n", 300000) // a 6 MB line: longer than the read buffer
	envelope := []string{
		meta,
		item(msg(id1, "one")),
		item(" " + msg(id1, "one")), // the same item (and its payload after a space): no finding
		item(msg(id1, "two")),       // 4: other content
		item(msg(id1, "one")),       // the same as the first again
		item(`{"type":"reasoning","id":"` + id1 + `"}`), // 6: another type
		item(`{"type":"function_call_output","id":"` + id2 + `","call_id":"c","output":"` + big + `"}`),
		item(`{"type":"function_call_output","id":"` + id2 + `","call_id":"c","output":"` + big + `"}`),
		item(`{"type":"function_call_output","id":"` + id2 + `","call_id":"c","output":"` + big + `x"}`), // 9
		`{"timestamp":"2026-04-07T09:00:00.004Z","type":"compacted","payload":{"message":"s","replacement_history":[` + msg(id3, "kept") + `]}}`,
		item(msg(id3, "kept")),
		item(msg(id3, "changed")), // 12
	}
	bare := []string{
		`{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-08-20T14:02:11.531Z","instructions":null}`,
		msg(id1, "one"),
		msg(id1, "one"),
		msg(id1, "two"), // 4
	}
	for _, tt := range []struct {
		name  string
		lines []string
		want  []int // lines reported
	}{
		{"envelope", envelope, []int{4, 6, 9, 12}},
		{"bare", bare, []int{4}},
	} {
		src := strings.Join(tt.lines, "\n") + "\n"
		path := filepath.Join(t.TempDir(), "rollout.jsonl")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		dups := func(r io.Reader) []int {
			var lines []int
			_, err := reconstruct.Replay(r, reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
				if o.Kind() == reconstruct.ItemDuplicateID {
					lines = append(lines, o.Pos.Line)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			return lines
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fromFile := dups(f)
		f.Close()
		fromStream := dups(io.MultiReader(strings.NewReader(src))) // cannot be read again
		var viaPath []int                                          // as verify opens it
		if _, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
			if o.Kind() == reconstruct.ItemDuplicateID {
				viaPath = append(viaPath, o.Pos.Line)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, viaPath); diff != "" {
			t.Errorf("%s, ReplayFile: duplicate-id lines (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, fromFile); diff != "" {
			t.Errorf("%s, read from a file: duplicate-id lines (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, fromStream); diff != "" {
			t.Errorf("%s, read from a stream: duplicate-id lines (-want +got):\n%s", tt.name, diff)
		}
	}
}
