package rollout

import (
	"strings"
	"testing"
)

// A byte order mark before the first record is told apart from torn bytes:
// only on the first line, only the 3 bytes of the mark.
func TestReaderBOM(t *testing.T) {
	meta := `{"timestamp":"2026-05-05T20:17:08.000Z","type":"session_meta","payload":{"id":"019e1f4a-2b30-7c41-9d52-6e7f8091a2b3"}}`
	for _, c := range []struct {
		name, text string
		line       int
		want       bool
	}{
		{"first line", "\ufeff" + meta + "\n" + meta + "\n", 1, true},
		{"second line", meta + "\n\ufeff" + meta + "\n", 2, false},
		{"torn bytes", `{"ti` + meta + "\n", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.text), 0)
			for {
				rec, err := r.Next()
				if err != nil {
					t.Fatalf("line %d not read: %v", c.line, err)
				}
				if rec.Line != c.line {
					continue
				}
				if rec.Shape != ShapeGlued || rec.BOM != c.want {
					t.Fatalf("shape %v, BOM %v; want glued, BOM %v", rec.Shape, rec.BOM, c.want)
				}
				return
			}
		})
	}
}
