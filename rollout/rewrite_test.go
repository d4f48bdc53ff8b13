package rollout_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/rollout"
)

// rewrite runs Rewrite over in and returns the output, the changes (as
// "LINE ACTION PATH BEFORE -> AFTER"), the quarantine lines and the skips.
type result struct {
	out        string
	changes    []string
	quarantine string
	skips      []string
}

func rewrite(t *testing.T, in string, plan *rollout.Plan, max int64) result {
	t.Helper()
	var r result
	var q []byte
	var out bytes.Buffer
	_, err := rollout.Rewrite(&out, strings.NewReader(in), plan, rollout.RewriteOptions{
		MaxLineBytes: max,
		Reopen:       func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(in)), nil },
		OnChange: func(c rollout.Change) {
			r.changes = append(r.changes, fmt.Sprintf("%d %s %s %s -> %s @%d", c.Line, c.Action, c.Path, c.Before, c.After, c.OutLine))
		},
		OnSkip: func(s rollout.Skip) { r.skips = append(r.skips, fmt.Sprintf("%d %s: %s", s.Line, s.Label, s.Reason)) },
		OnQuarantine: func(e rollout.QuarantineEntry) error {
			q = e.AppendJSON(q)
			return nil
		},
		RememberSeed: maphash.MakeSeed(),
	})
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	r.out, r.quarantine = out.String(), string(q)
	return r
}

func constant(v string) func(*rollout.EditContext) ([]byte, error) {
	return func(*rollout.EditContext) ([]byte, error) { return []byte(v), nil }
}

func TestRewriteEmptyPlanIsIdentity(t *testing.T) {
	inputs := []string{
		"",
		"{\"a\":1}\n",
		"{\"a\":1}\r\n{\"b\":2}",
		"\n\n  \n{\"a\":1}\n",
		"not json\n{\"a\":1}{\"b\":2}\n{\"torn\":",
		"{\"a\":\"\xff\xfe\"}\n",
		"{\"big\":\"" + strings.Repeat("x", 300<<10) + "\"}\n{\"a\":1}\n",
	}
	for i, in := range inputs {
		// Both paths: lines copied through, and lines read in full (as for
		// a diff, where every line is seen).
		for _, full := range []bool{false, true} {
			var out bytes.Buffer
			lines := 0
			opts := rollout.RewriteOptions{MaxLineBytes: 100 << 10} // the big line is over the maximum
			if full {
				opts.OnLine = func(d rollout.DiffLine) error {
					if d.Op != '=' {
						t.Errorf("input %d: diff line %c for an empty plan", i, d.Op)
					}
					lines++
					return nil
				}
			}
			st, err := rollout.Rewrite(&out, strings.NewReader(in), &rollout.Plan{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != in {
				t.Errorf("input %d (full %v): output differs from input:\n got %.200q\nwant %.200q", i, full, out.String(), in)
			}
			if st.Changes != 0 || st.BytesIn != int64(len(in)) || st.BytesOut != int64(len(in)) || st.LinesIn != st.LinesOut {
				t.Errorf("input %d: stats %+v", i, *st)
			}
			if full && lines != st.LinesIn {
				t.Errorf("input %d: %d diff lines for %d lines", i, lines, st.LinesIn)
			}
		}
	}
}

func TestRewriteSetMember(t *testing.T) {
	in := `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"id":null,"type":"message"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"type":"message","id":"fc_1"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{}}` + "\n"
	var plan rollout.Plan
	missing := func(old []byte, ok bool) bool { return rollout.DecodeString(old) == "" }
	for line, v := range map[int]string{1: `"msg_a"`, 2: `"msg_b"`, 4: `"msg_d"`} {
		plan.Add(line, rollout.Edit{Kind: rollout.EditSet, Label: "item/missing-id", Path: []string{"payload"}, Key: "id", When: missing, Value: constant(v)})
	}
	plan.Add(3, rollout.Edit{Kind: rollout.EditSet, Label: "x", Path: []string{"payload"}, Key: "id",
		When: func(old []byte, ok bool) bool { return string(old) == `"fc_1"` }, Value: constant(`"msg_c"`)})
	// A guard that does not hold leaves the line alone and says so.
	plan.Add(3, rollout.Edit{Kind: rollout.EditSet, Label: "guarded", Path: []string{"payload"}, Key: "role",
		When: func([]byte, bool) bool { return false }, Value: constant(`"x"`)})
	r := rewrite(t, in, &plan, 0)
	want := `{"timestamp":"t","type":"response_item","payload":{"id":"msg_a","type":"message","role":"user"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"id":"msg_b","type":"message"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"type":"message","id":"msg_c"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"id":"msg_d"}}` + "\n"
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	wantChanges := []string{
		`1 set payload.id  -> "msg_a" @1`,
		`2 set payload.id null -> "msg_b" @2`,
		`3 set payload.id "fc_1" -> "msg_c" @3`,
		`4 set payload.id  -> "msg_d" @4`,
	}
	if diff := cmp.Diff(wantChanges, r.changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"3 guarded: no object on the line matches"}, r.skips); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
}

func TestRewriteDuplicateKeysAreNotFixedSilently(t *testing.T) {
	in := `{"payload":{"id":"a","id":"b"}}` + "\n"
	var plan rollout.Plan
	plan.Add(1, rollout.Edit{Kind: rollout.EditSet, Label: "dup", Path: []string{"payload"}, Key: "id", Value: constant(`"c"`)})
	r := rewrite(t, in, &plan, 0)
	if r.out != in {
		t.Errorf("a member given twice was edited: %q", r.out)
	}
	if len(r.skips) != 1 || !strings.Contains(r.skips[0], `2 "id" members`) {
		t.Errorf("skips = %q, want one naming the duplicate members", r.skips)
	}
}

func TestRewriteSequence(t *testing.T) {
	in := `{"timestamp":"a","ordinal":0,"type":"x"}` + "\n" +
		"\n" + // blank lines are not numbered
		`{"timestamp":"b","type":"x"}` + "\n" + // missing: inserted after timestamp
		`{"timestamp":"c","ordinal":7,"type":"x"}` + "\r\n" + // wrong: only the digits change
		"garbage\n" + // not an object: not numbered
		`{"type":"x","ordinal":3}` + "\n" + // right already
		`{"type":"x"}{"timestamp":"d","ordinal":1}` // two objects, no terminator
	plan := rollout.Plan{Sequence: &rollout.Sequence{Key: "ordinal", After: "timestamp", Label: func(int) string { return "ordinal/gap" }}}
	r := rewrite(t, in, &plan, 0)
	want := `{"timestamp":"a","ordinal":0,"type":"x"}` + "\n" +
		"\n" +
		`{"timestamp":"b","ordinal":1,"type":"x"}` + "\n" +
		`{"timestamp":"c","ordinal":2,"type":"x"}` + "\r\n" +
		"garbage\n" +
		`{"type":"x","ordinal":3}` + "\n" +
		`{"ordinal":4,"type":"x"}{"timestamp":"d","ordinal":5}`
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if len(r.changes) != 4 {
		t.Errorf("changes = %q, want 4", r.changes)
	}
}

func TestRewriteDropSplitLF(t *testing.T) {
	in := "{\"a\":1}\r\n" +
		"not json\n" +
		"{\"b\":2} {\"c\":3}\t\r\n" +
		"{\"d\":4}{\"e\":\n"
	var plan rollout.Plan
	plan.Add(1, rollout.Edit{Kind: rollout.EditLF, Label: "line/crlf"})
	plan.Add(2, rollout.Edit{Kind: rollout.EditDrop, Label: "line/invalid-json"})
	plan.Add(3, rollout.Edit{Kind: rollout.EditSplit, Label: "line/concatenated"})
	plan.Add(4, rollout.Edit{Kind: rollout.EditDrop, Label: "line/invalid-json"})
	r := rewrite(t, in, &plan, 0)
	// The split keeps every byte: the separator starts the second line and
	// the trailing tab stays before the terminator.
	want := "{\"a\":1}\n" +
		"{\"b\":2}\r\n {\"c\":3}\t\r\n"
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	wantQ := `{"line":2,"byte_offset":9,"reason":"line/invalid-json","raw":"not json","eol":"\n"}` + "\n" +
		`{"line":4,"byte_offset":36,"reason":"line/invalid-json","raw":"{\"d\":4}{\"e\":","eol":"\n"}` + "\n"
	if diff := cmp.Diff(wantQ, r.quarantine); diff != "" {
		t.Errorf("quarantine (-want +got):\n%s", diff)
	}
}

func TestRewriteDropObjectOfConcatenatedLine(t *testing.T) {
	in := `{"k":"keep"} {"k":"drop"}` + "\n"
	var plan rollout.Plan
	plan.Add(1, rollout.Edit{Kind: rollout.EditDrop, Label: "tool/orphan-output",
		Match: func(obj []byte) bool { return bytes.Contains(obj, []byte(`"drop"`)) }})
	plan.Add(1, rollout.Edit{Kind: rollout.EditSplit, Label: "line/concatenated"})
	r := rewrite(t, in, &plan, 0)
	if r.out != `{"k":"keep"}`+"\n" {
		t.Errorf("output = %q", r.out)
	}
	wantQ := `{"line":1,"byte_offset":12,"reason":"tool/orphan-output","raw":" {\"k\":\"drop\"}","eol":""}` + "\n"
	if r.quarantine != wantQ {
		t.Errorf("quarantine = %q, want %q", r.quarantine, wantQ)
	}
}

func TestRewriteQuarantineNotUTF8(t *testing.T) {
	e := rollout.QuarantineEntry{Line: 3, Offset: 10, Reason: "line/torn-tail", Raw: []byte("{\"a\":\"\xff"), EOL: ""}
	got := string(e.AppendJSON(nil))
	want := `{"line":3,"byte_offset":10,"reason":"line/torn-tail","raw_base64":"eyJhIjoi/w==","eol":""}` + "\n"
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	e = rollout.QuarantineEntry{Line: 1, Reason: "r", Raw: []byte("<a>\x01\"\\é"), EOL: "\r\n"}
	want = `{"line":1,"byte_offset":0,"reason":"r","raw":"<a>\u0001\"\\é","eol":"\r\n"}` + "\n"
	if got := string(e.AppendJSON(nil)); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestRewriteMoveFront(t *testing.T) {
	in := `{"type":"a","ordinal":5}` + "\n" +
		`{"type":"b"}` + "\n" +
		`{"type":"x"}{"type":"meta","ordinal":0}` // last line, no terminator
	plan := rollout.Plan{Sequence: &rollout.Sequence{Key: "ordinal", After: "timestamp"}}
	plan.Add(3, rollout.Edit{Kind: rollout.EditMoveFront, Label: "meta/not-first",
		Match: func(obj []byte) bool { return bytes.Contains(obj, []byte(`"meta"`)) }})
	plan.Add(3, rollout.Edit{Kind: rollout.EditSplit, Label: "line/concatenated"})
	r := rewrite(t, in, &plan, 0)
	want := `{"type":"meta","ordinal":0}` + "\n" +
		`{"type":"a","ordinal":1}` + "\n" +
		`{"ordinal":2,"type":"b"}` + "\n" +
		`{"ordinal":3,"type":"x"}`
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(r.changes, "\n"), "3 move") {
		t.Errorf("changes %q do not report the move", r.changes)
	}
}

func TestRewriteMoveFrontDetectsChangedSource(t *testing.T) {
	in := "{\"a\":1}\n{\"meta\":1}\n"
	var plan rollout.Plan
	plan.Add(2, rollout.Edit{Kind: rollout.EditMoveFront, Label: "meta/not-first"})
	_, err := rollout.Rewrite(io.Discard, strings.NewReader(in), &plan, rollout.RewriteOptions{
		Reopen: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("{\"a\":1}\n{\"meta\":2}\n")), nil
		},
	})
	if !errors.Is(err, rollout.ErrSourceChanged) {
		t.Errorf("err = %v, want ErrSourceChanged", err)
	}
}

func TestRewriteInsertAfterLastLineWithoutEOL(t *testing.T) {
	in := `{"timestamp":"t","ordinal":0}` + "\n" + `{"timestamp":"u","ordinal":1}`
	plan := rollout.Plan{Sequence: &rollout.Sequence{Key: "ordinal", After: "timestamp"}}
	plan.Add(1, rollout.Edit{Kind: rollout.EditInsertAfter, Label: "tool/orphan-call", Value: func(c *rollout.EditContext) ([]byte, error) {
		return []byte(`{"timestamp":"new","type":"response_item"}`), nil
	}})
	plan.Add(2, rollout.Edit{Kind: rollout.EditInsertAfter, Label: "tool/orphan-call", Value: constant(`{"x":1}`)})
	r := rewrite(t, in, &plan, 0)
	want := `{"timestamp":"t","ordinal":0}` + "\n" +
		`{"timestamp":"new","ordinal":1,"type":"response_item"}` + "\n" +
		`{"timestamp":"u","ordinal":2}` + "\n" +
		`{"ordinal":3,"x":1}` + "\n"
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestRewriteRememberAndFill(t *testing.T) {
	item := `{"type":"message","role":"user","content":"hi"}`
	other := `{"type":"message","role":"user","content":"other"}`
	in := `{"type":"response_item","payload":` + item + `}` + "\n" +
		`{"type":"response_item","payload":` + item + `}` + "\n" + // the same bytes: a second item
		`{"type":"compacted","payload":{"replacement_history":[` + item + `,` + other + `,` + item + `,` + item + `]}}` + "\n"
	var plan rollout.Plan
	n := 0
	next := func(*rollout.EditContext) ([]byte, error) { n++; return []byte(fmt.Sprintf(`"msg_%d"`, n)), nil }
	for _, line := range []int{1, 2} {
		plan.Add(line, rollout.Edit{Kind: rollout.EditSet, Label: "item/missing-id", Path: []string{"payload"}, Key: "id", Value: next, Remember: true})
	}
	plan.Add(3, rollout.Edit{Kind: rollout.EditFill, Label: "item/missing-id", Path: []string{"payload", "replacement_history"}, Key: "id"})
	r := rewrite(t, in, &plan, 0)
	with := func(id string) string { return `{"id":"` + id + `",` + item[1:] }
	want := `{"type":"response_item","payload":` + with("msg_1") + `}` + "\n" +
		`{"type":"response_item","payload":` + with("msg_2") + `}` + "\n" +
		`{"type":"compacted","payload":{"replacement_history":[` + with("msg_1") + `,` + other + `,` + with("msg_2") + `,` + item + `]}}` + "\n"
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestRewriteSplice(t *testing.T) {
	in := `{"payload":{"a":1,"deferred":true,"b":2}}` + "\n" + `{"other":1}` + "\n"
	var plan rollout.Plan
	for line := 1; line <= 2; line++ {
		plan.Add(line, rollout.Edit{Kind: rollout.EditSplice, Label: "handoff/stale-deferred", Key: "payload.deferred",
			Splice: func(obj []byte) (int, int, []byte, error) {
				i := bytes.Index(obj, []byte(`,"deferred":true`))
				if i < 0 {
					return 0, 0, nil, fmt.Errorf("%w: no deferred", rollout.ErrSkipEdit)
				}
				return i, i + len(`,"deferred":true`), nil, nil
			}})
	}
	r := rewrite(t, in, &plan, 0)
	want := `{"payload":{"a":1,"b":2}}` + "\n" + `{"other":1}` + "\n"
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"2 handoff/stale-deferred: no deferred"}, r.skips); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
}

func TestRewriteOversizedLineIsKept(t *testing.T) {
	big := `{"big":"` + strings.Repeat("y", 2000) + `"}`
	in := big + "\n" + `{"a":1}` + "\n"
	var plan rollout.Plan
	plan.Add(1, rollout.Edit{Kind: rollout.EditSet, Label: "x", Key: "id", Value: constant(`"i"`)})
	plan.Add(2, rollout.Edit{Kind: rollout.EditSet, Label: "x", Key: "id", Value: constant(`"i"`)})
	r := rewrite(t, in, &plan, 1000)
	want := big + "\n" + `{"id":"i","a":1}` + "\n"
	if r.out != want {
		t.Errorf("output = %.80q…", r.out)
	}
	if len(r.skips) != 1 || !strings.HasPrefix(r.skips[0], "1 x: the line is longer") {
		t.Errorf("skips = %q", r.skips)
	}
}

func TestRewriteDiffLines(t *testing.T) {
	in := "{\"a\":1}\nbad\n{\"b\":2}{\"c\":3}\n{\"d\":4}"
	var plan rollout.Plan
	plan.Add(2, rollout.Edit{Kind: rollout.EditDrop, Label: "line/invalid-json"})
	plan.Add(3, rollout.Edit{Kind: rollout.EditSplit, Label: "line/concatenated"})
	var got []string
	_, err := rollout.Rewrite(io.Discard, strings.NewReader(in), &plan, rollout.RewriteOptions{
		OnLine: func(d rollout.DiffLine) error {
			got = append(got, fmt.Sprintf("%c %d %d %q", d.Op, d.Old, d.New, d.Text))
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`= 1 1 "{\"a\":1}\n"`,
		`- 2 0 "bad\n"`,
		`- 3 0 "{\"b\":2}{\"c\":3}\n"`,
		`+ 0 2 "{\"b\":2}\n"`,
		`+ 0 3 "{\"c\":3}\n"`,
		`= 4 4 "{\"d\":4}"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff lines (-want +got):\n%s", diff)
	}
}

// TestSequenceFrom: a renumbering starting at Sequence.From leaves the
// lines before it as they are and goes on from the last of their values;
// a line too long to edit keeps its number and is counted.
func TestSequenceFrom(t *testing.T) {
	in := `{"ordinal":7,"a":1}
{"ordinal":8,"a":2}
{"ordinal":8,"a":3}
{"ordinal":9,"a":4}
{"ordinal":11,"a":"` + strings.Repeat("x", 40) + `"}
{"ordinal":11,"a":6}
`
	plan := &rollout.Plan{Sequence: &rollout.Sequence{Key: "ordinal", From: 3}}
	got := rewrite(t, in, plan, 30)
	want := `{"ordinal":7,"a":1}
{"ordinal":8,"a":2}
{"ordinal":9,"a":3}
{"ordinal":10,"a":4}
{"ordinal":11,"a":"` + strings.Repeat("x", 40) + `"}
{"ordinal":12,"a":6}
`
	if got.out != want {
		t.Errorf("output:\n%s\nwant:\n%s", got.out, want)
	}
	// Lines 1-2 are untouched; line 5 is too long to edit (its own number
	// is assumed to be 11, as the writer numbered it) but counted.
	wantChanges := []string{"3 set ordinal 8 -> 9 @3", "4 set ordinal 9 -> 10 @4", "6 set ordinal 11 -> 12 @6"}
	if diff := cmp.Diff(wantChanges, got.changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}
