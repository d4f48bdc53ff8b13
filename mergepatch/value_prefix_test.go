package mergepatch

import (
	"strings"
	"testing"
)

// AppendJSONPrefix appends what AppendJSON does, cut after the limit.
func TestAppendJSONPrefix(t *testing.T) {
	for _, src := range []string{`{"a":1,"b":{"c":"xyz","d":[1,2]},"e":null}`, `"just a string"`, `[1,2,3]`, `null`, `{}`} {
		v, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		full := string(v.AppendJSON(nil))
		for limit := 0; limit <= len(full)+2; limit++ {
			got, whole := v.AppendJSONPrefix([]byte("<"), limit)
			g := strings.TrimPrefix(string(got), "<")
			if !strings.HasPrefix(full, g) {
				t.Errorf("%s limit %d: %q is not a prefix of %q", src, limit, g, full)
			}
			if whole != (g == full) || limit >= len(full) && !whole {
				t.Errorf("%s limit %d: whole %v for %q of %q", src, limit, whole, g, full)
			}
			if !whole && len(g) > limit+8 { // a key and closing braces may pass the limit
				t.Errorf("%s limit %d: %d bytes", src, limit, len(g))
			}
		}
	}
}
