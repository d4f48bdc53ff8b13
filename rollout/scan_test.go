package rollout

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// stringEnd and ValueEnd end a value where gjson does, whatever mix of
// escaped quotes and backslashes a string holds and wherever it falls
// against the byte loop's 32 bytes.
func TestValueEndAgainstGJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{`a`, `\"`, `\\`, `\\\"`, `é`, `\u0041`, ` `, `"`, `\n`}
	for n := range 5000 {
		var b strings.Builder
		b.WriteByte('"')
		for range r.IntN(80) {
			p := pieces[r.IntN(len(pieces))]
			if p == `"` {
				continue // a bare quote ends the string: added below
			}
			b.WriteString(p)
		}
		b.WriteString(`"`)
		str := b.String()
		for _, v := range []string{str, `{"k":` + str + `,"n":[1,` + str + `]}`} {
			raw := []byte(v + `,"rest"`)
			want := len(gjson.Get("["+v+`,"rest"]`, "0").Raw)
			if got := ValueEnd(raw, 0); got != want {
				t.Fatalf("case %d: ValueEnd(%s) = %d, gjson ends it at %d", n, v, got, want)
			}
		}
	}
	for _, torn := range []string{`"abc`, `"ab\"`, `"` + strings.Repeat("x", 40) + `\`, `"\`} {
		if got := ValueEnd([]byte(torn), 0); got != -1 {
			t.Errorf("ValueEnd(%s) = %d, want -1 (no end)", torn, got)
		}
	}
}
