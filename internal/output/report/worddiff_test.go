package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/rollout"
)

// The readable diff: changed regions only, token by token, bounded, and
// escaped; a changed id on a multi-megabyte line is one short line.
func TestWordDiff(t *testing.T) {
	big := strings.Repeat("y", 4<<20)
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"id replaced",
			`{"type":"message","id":"fc_1-2","role":"user"}`, `{"type":"message","id":"msg_3-4","role":"user"}`,
			`~ line 1: {"type":"message","id":"[-fc_1-2-]{+msg_3-4+}","role":"user"}`},
		{"id prefix changed inside the word",
			`{"id":"fc_019cd719-0002","x":1}`, `{"id":"fco_019cd719-0002","x":1}`,
			`~ line 1: {"id":"[-fc_019cd719-0002-]{+fco_019cd719-0002+}","x":1}`},
		{"key added",
			`{"a":1,"b":2}`, `{"a":1,"id":"x","b":2}`,
			`~ line 1: {"a":1,{+"id":"x",+}"b":2}`},
		{"line ending",
			"{}\r\n", "{}\n",
			`~ line 1: line ending CRLF -> LF`},
		{"control bytes escaped",
			"{\"t\":\"a\x1b]0;x\x07\"}", `{"t":"a"}`,
			`~ line 1: {"t":"a[-\x1b]0;x\x07-]"}`},
		{"4 MB line, one id",
			`{"id":"fc_1","output":"` + big + `"}`, `{"id":"msg_2","output":"` + big + `"}`,
			`~ line 1: {"id":"[-fc_1-]{+msg_2+}","output":"` + strings.Repeat("y", 28) + "…"},
		{"two changes far apart",
			`{"id":"a","x":"` + strings.Repeat("z", 200) + `","n":1}`, `{"id":"b","x":"` + strings.Repeat("z", 200) + `","n":2}`,
			`~ line 1: {"id":"[-a-]{+b+}","x":"` + strings.Repeat("z", 33) + "…" + strings.Repeat("z", 34) + `","n":[-1-]{+2+}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &wordDiff{w: &out}
			d.line(rollout.DiffLine{Op: '-', Old: 1, Text: []byte(tt.old)})
			d.line(rollout.DiffLine{Op: '+', New: 1, Text: []byte(tt.new)})
			if err := d.close(); err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSuffix(out.String(), "\n")
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if len(got) > wordDiffMaxLine+2*wordDiffMaxPart {
				t.Errorf("%d bytes: over the bound", len(got))
			}
		})
	}
}

// A removed line, and lines that do not pair up, print whole but bounded.
func TestWordDiffWholeLines(t *testing.T) {
	var out bytes.Buffer
	d := &wordDiff{w: &out}
	d.line(rollout.DiffLine{Op: '=', Old: 1, New: 1})
	d.line(rollout.DiffLine{Op: '-', Old: 2, Text: []byte(`{"a":1}{"b":2}` + "\n")})
	d.line(rollout.DiffLine{Op: '+', New: 2, Text: []byte(`{"a":1}` + "\n")})
	d.line(rollout.DiffLine{Op: '+', New: 3, Text: []byte(`{"b":2}` + "\n")})
	d.line(rollout.DiffLine{Op: '-', Old: 3, Text: []byte(strings.Repeat("q", 5000))})
	d.close()
	want := "- line 2 (removed, 14 bytes): {\"a\":1}{\"b\":2}\n" +
		"+ line 2 (added, 7 bytes): {\"a\":1}\n" +
		"+ line 3 (added, 7 bytes): {\"b\":2}\n" +
		"- line 3 (removed, 5000 bytes): " + strings.Repeat("q", wordDiffMaxLine) + "…\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
