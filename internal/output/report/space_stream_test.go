package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/space"
)

// The JSON report writes per_file row by row from the summary's spool: the
// document must still be one JSON value indented as encoding/json indents
// it, with a row per file in the order added.
func TestSpaceJSONStreamsPerFile(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 3} {
		sum := space.NewSummary(space.DefaultTop)
		for i := range n {
			sum.Add(&space.File{Path: string(rune('a'+i)) + "<&>", ThreadID: "t", DiskBytes: int64(i),
				ByType: []space.Bucket{{Name: "session_meta", Bytes: 1, Count: 1}}}, nil)
		}
		var out bytes.Buffer
		if err := WriteSpaceJSON(&out, sum, nil, nil); err != nil {
			t.Fatal(err)
		}
		sum.Close()
		var compact, indented bytes.Buffer
		if err := json.Compact(&compact, out.Bytes()); err != nil {
			t.Fatalf("%d files: not JSON: %v\n%s", n, err, out.Bytes())
		}
		json.Indent(&indented, compact.Bytes(), "", "  ")
		indented.WriteByte('\n')
		if !bytes.Equal(indented.Bytes(), out.Bytes()) {
			t.Errorf("%d files: not indented as encoding/json does:\n%s", n, out.Bytes())
		}
		var doc struct {
			Files   int `json:"files"`
			PerFile []struct {
				Path string `json:"path"`
			} `json:"per_file"`
			Errors []any `json:"errors"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Files != n || len(doc.PerFile) != n || doc.Errors == nil {
			t.Fatalf("%d files: files %d, %d rows, errors %v", n, doc.Files, len(doc.PerFile), doc.Errors)
		}
		for i, r := range doc.PerFile {
			if want := string(rune('a'+i)) + "<&>"; r.Path != want {
				t.Errorf("row %d: %q, want %q", i, r.Path, want)
			}
		}
	}
}
