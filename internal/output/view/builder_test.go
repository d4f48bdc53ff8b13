package view

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// A clipped string must not keep the whole string alive: the page keeps
// thousands of them, cut from tool outputs of megabytes.
func TestClipCopies(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1000) // 2000 bytes
	got, cut := clip(long, 101)
	if !cut || len(got) != 100 || got != long[:100] {
		t.Fatalf("clip: %d bytes, cut %v; want the first 100 bytes (a rune boundary)", len(got), cut)
	}
	if unsafe.StringData(got) == unsafe.StringData(long) {
		t.Errorf("the clipped string shares the memory of the whole one")
	}
	if got, cut := clip("short", 101); cut || got != "short" {
		t.Errorf("clip(short) = %q, %v", got, cut)
	}
	if got, _ := clip("a\xffb", 10); got != "a\uFFFDb" {
		t.Errorf("invalid UTF-8 not replaced: %q", got)
	}
}

func feed(t *testing.T, b *Builder, data string) {
	t.Helper()
	rd := rollout.NewReader(strings.NewReader(data), 1<<20)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Record(rec)
	}
}

// Memory follows the records shown, whatever the file: a run of blank or
// unreadable lines is one record, the records and the text kept are capped.
func TestBounds(t *testing.T) {
	t.Parallel()
	meta := `{"timestamp":"2026-03-10T09:35:30.000Z","type":"session_meta","payload":{"id":"x"}}` + "\n"
	b := New(Options{})
	feed(t, b, meta+strings.Repeat("\n", 5000)+strings.Repeat("not json\n", 3000))
	pg := b.Finish(&reconstruct.State{}, []*Finding{{Finding: checks.Finding{Rule: "line/blank", Line: 4000}}})
	var got []string
	for _, tr := range pg.Turns {
		for _, e := range tr.Records {
			got = append(got, fmt.Sprintf("%s %d-%d findings=%d", e.Title, e.Line, e.LastLine, len(e.Findings)))
		}
	}
	want := []string{"session start 1-0 findings=0", "blank line 2-5001 findings=1", "invalid JSON 5002-8001 findings=0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}

	b = New(Options{MaxRecords: 2, MaxText: 100, MaxTotalText: 150})
	line := `{"timestamp":"2026-03-10T09:35:31.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + strings.Repeat("a", 120) + `"}]}}` + "\n"
	feed(t, b, meta+line+line+line)
	pg = b.Finish(&reconstruct.State{}, nil)
	if pg.Shown != 2 || pg.NotShown != 2 {
		t.Errorf("shown %d, not shown %d; want 2 and 2", pg.Shown, pg.NotShown)
	}
	var kept int
	for _, tr := range pg.Turns {
		for _, e := range tr.Records {
			for _, bl := range e.Blocks {
				kept += len(bl.Text)
			}
		}
	}
	if kept > 150 {
		t.Errorf("kept %d bytes of text, over the budget of 150", kept)
	}
}

// decodeString decodes only a prefix of long strings but knows the size
// of the whole: checked against a full decode.
func TestDecodeString(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "é", "€", "😀", `\"`, `\\`, `\n`, `\u00e9`, `\u20ac`, `\ud83d\ude00`, `\u0000`, "<b>", `\ud800x`}
	for n := 0; n < 200; n++ {
		var raw strings.Builder
		raw.WriteByte('"')
		for i := 0; i < n*7%53+n; i++ {
			raw.WriteString(pieces[(i*31+n)%len(pieces)])
		}
		raw.WriteByte('"')
		v := []byte(raw.String())
		full := rollout.DecodeString(v)
		for _, limit := range []int{0, 1, 5, 17, 64, 1000} {
			got := decodeString(v, limit)
			if got.size != int64(len(full)) {
				t.Fatalf("%s limit %d: size %d, want %d", v, limit, got.size, len(full))
			}
			if !strings.HasPrefix(full, got.s) {
				t.Fatalf("%s limit %d: %q is not a prefix of %q", v, limit, got.s, full)
			}
			if len(got.s) < min(limit, len(full)) {
				t.Fatalf("%s limit %d: only %d bytes decoded", v, limit, len(got.s))
			}
		}
	}
}
