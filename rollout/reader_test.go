package rollout

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// rec is a copy of what a Record says about one line, comparable with cmp.
type rec struct {
	Line        int
	Offset      int64
	Size        int64
	EOL         string
	Shape       Shape
	Raw         string
	RawNil      bool
	Parts       [][2]int
	InvalidUTF8 bool
	ControlChar bool
}

// readAll reads every record of in; Raw is copied since the Record is reused.
func readAll(t testing.TB, r io.Reader, max int64) []rec {
	t.Helper()
	rd := NewReader(r, max)
	var out []rec
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, rec{r.Line, r.Offset, r.Size, r.EOL, r.Shape, string(r.Raw), r.Raw == nil,
			r.Parts, r.InvalidUTF8, r.ControlChar})
	}
	// io.EOF is sticky.
	if _, err := rd.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after EOF: %v, want io.EOF", err)
	}
	return out
}

// obj is a terminated one-object line at the given position.
func obj(line int, off int64, raw, eol string) rec {
	return rec{Line: line, Offset: off, Size: int64(len(raw)), EOL: eol, Shape: ShapeObject, Raw: raw}
}

func TestReaderLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []rec
	}{
		{"empty file", "", nil},
		{"only newline", "\n", []rec{{Line: 1, Offset: 0, Size: 0, EOL: "\n", Shape: ShapeBlank, Raw: ""}}},
		{"lf", "{\"a\":1}\n{\"b\":22}\n", []rec{
			obj(1, 0, `{"a":1}`, "\n"),
			obj(2, 8, `{"b":22}`, "\n"),
		}},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", []rec{
			obj(1, 0, `{"a":1}`, "\r\n"),
			obj(2, 9, `{"b":2}`, "\r\n"),
		}},
		{"blank lines and a valid last line without newline", "{\"a\":1}\r\n\n  \n\t\r\n{\"b\":2}", []rec{
			obj(1, 0, `{"a":1}`, "\r\n"),
			{Line: 2, Offset: 9, Size: 0, EOL: "\n", Shape: ShapeBlank, Raw: ""},
			{Line: 3, Offset: 10, Size: 2, EOL: "\n", Shape: ShapeBlank, Raw: "  "},
			{Line: 4, Offset: 13, Size: 1, EOL: "\r\n", Shape: ShapeBlank, Raw: "\t"},
			obj(5, 16, `{"b":2}`, ""),
		}},
		{"torn tail", "{\"a\":1}\n{\"a\":", []rec{
			obj(1, 0, `{"a":1}`, "\n"),
			{Line: 2, Offset: 8, Size: 5, EOL: "", Shape: ShapeTorn, Raw: `{"a":`},
		}},
		{"unparseable line with newline is invalid, not torn", "{\"a\":\n{\"b\":2}\n", []rec{
			{Line: 1, Offset: 0, Size: 5, EOL: "\n", Shape: ShapeInvalid, Raw: `{"a":`},
			obj(2, 6, `{"b":2}`, "\n"),
		}},
		{"concatenated", "{\"a\":1}{\"b\":2}\n", []rec{
			{Line: 1, Offset: 0, Size: 14, EOL: "\n", Shape: ShapeConcatenated, Raw: `{"a":1}{"b":2}`, Parts: [][2]int{{0, 7}, {7, 14}}},
		}},
		{"concatenated with space", "{\"a\":1} {\"b\":2}\n", []rec{
			{Line: 1, Offset: 0, Size: 15, EOL: "\n", Shape: ShapeConcatenated, Raw: `{"a":1} {"b":2}`, Parts: [][2]int{{0, 7}, {8, 15}}},
		}},
		{"concatenated, braces in strings and nesting", `{"a":{"x":[1,"}"]}}{"b":2}` + "\n", []rec{
			{Line: 1, Offset: 0, Size: 26, EOL: "\n", Shape: ShapeConcatenated, Raw: `{"a":{"x":[1,"}"]}}{"b":2}`, Parts: [][2]int{{0, 19}, {19, 26}}},
		}},
		{"concatenated last line without newline is not torn", `{"a":1}{"b":2}`, []rec{
			{Line: 1, Offset: 0, Size: 14, EOL: "", Shape: ShapeConcatenated, Raw: `{"a":1}{"b":2}`, Parts: [][2]int{{0, 7}, {7, 14}}},
		}},
		{"object then a broken one is invalid", "{\"a\":1}{\"b\":\n", []rec{
			{Line: 1, Offset: 0, Size: 12, EOL: "\n", Shape: ShapeInvalid, Raw: `{"a":1}{"b":`},
		}},
		{"array is not an object", "[1,2]\n", []rec{
			{Line: 1, Offset: 0, Size: 5, EOL: "\n", Shape: ShapeInvalid, Raw: "[1,2]"},
		}},
		{"scalar is not an object", "\"s\"\n42\n", []rec{
			{Line: 1, Offset: 0, Size: 3, EOL: "\n", Shape: ShapeInvalid, Raw: `"s"`},
			{Line: 2, Offset: 4, Size: 2, EOL: "\n", Shape: ShapeInvalid, Raw: "42"},
		}},
		{"invalid UTF-8 inside a string", "{\"a\":\"\xff\"}\n", []rec{
			{Line: 1, Offset: 0, Size: 9, EOL: "\n", Shape: ShapeObject, Raw: "{\"a\":\"\xff\"}", InvalidUTF8: true},
		}},
		{"invalid UTF-8 alone", "\xc3\x28\n", []rec{
			{Line: 1, Offset: 0, Size: 2, EOL: "\n", Shape: ShapeInvalid, Raw: "\xc3\x28", InvalidUTF8: true},
		}},
		{"raw NUL in a string", "{\"a\":\"x\x00y\"}\n", []rec{
			{Line: 1, Offset: 0, Size: 11, EOL: "\n", Shape: ShapeInvalid, Raw: "{\"a\":\"x\x00y\"}", ControlChar: true},
		}},
		{"raw NUL line", "\x00\n{\"a\":1}\n", []rec{
			{Line: 1, Offset: 0, Size: 1, EOL: "\n", Shape: ShapeInvalid, Raw: "\x00", ControlChar: true},
			obj(2, 2, `{"a":1}`, "\n"),
		}},
		{"escaped NUL", "{\"a\":\"\\u0000\"}\n", []rec{
			{Line: 1, Offset: 0, Size: 14, EOL: "\n", Shape: ShapeObject, Raw: `{"a":"\u0000"}`, ControlChar: true},
		}},
		{"escaped backslash then u0000 is not a NUL", "{\"a\":\"\\\\u0000\"}\n", []rec{
			obj(1, 0, `{"a":"\\u0000"}`, "\n"),
		}},
		{"escaped backslash then escaped NUL", "{\"a\":\"\\\\\\u0000\"}\n", []rec{
			{Line: 1, Offset: 0, Size: 16, EOL: "\n", Shape: ShapeObject, Raw: `{"a":"\\\u0000"}`, ControlChar: true},
		}},
		{"lone CR at end of file", "\r", []rec{
			{Line: 1, Offset: 0, Size: 1, EOL: "", Shape: ShapeBlank, Raw: "\r"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The same records whatever the chunking of the underlying reads.
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"one byte", iotest.OneByteReader(strings.NewReader(tt.in))},
				{"half", iotest.HalfReader(strings.NewReader(tt.in))},
			} {
				got := readAll(t, r.r, 0)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s reads: records differ (-want +got):\n%s", r.name, diff)
				}
			}
		})
	}
}

func TestReaderMaxLine(t *testing.T) {
	t.Parallel()
	const max = 10
	line10 := `{"a":"12"}`  // exactly max
	line11 := `{"a":"123"}` // max + 1
	if len(line10) != max || len(line11) != max+1 {
		t.Fatal("test lines have the wrong length")
	}
	over := func(line int, off, size int64, eol string) rec {
		return rec{Line: line, Offset: off, Size: size, EOL: eol, Shape: ShapeOversized, RawNil: true}
	}
	tests := []struct {
		name string
		in   string
		want []rec
	}{
		{"at max with LF", line10 + "\n" + line10 + "\n", []rec{
			obj(1, 0, line10, "\n"), obj(2, 11, line10, "\n"),
		}},
		{"at max with CRLF", line10 + "\r\n" + line10, []rec{
			obj(1, 0, line10, "\r\n"), obj(2, 12, line10, ""),
		}},
		{"over by one with LF", line11 + "\n" + line10 + "\n", []rec{
			over(1, 0, 11, "\n"), obj(2, 12, line10, "\n"),
		}},
		{"over by one with CRLF", line11 + "\r\n" + line10 + "\n", []rec{
			over(1, 0, 11, "\r\n"), obj(2, 13, line10, "\n"),
		}},
		{"over by one without newline", line10 + "\n" + line11, []rec{
			obj(1, 0, line10, "\n"), over(2, 11, 11, ""),
		}},
		{"far over with LF", strings.Repeat("x", 100) + "\n" + line10, []rec{
			over(1, 0, 100, "\n"), obj(2, 101, line10, ""),
		}},
		{"far over with CRLF", strings.Repeat("x", 100) + "\r\n" + line10, []rec{
			over(1, 0, 100, "\r\n"), obj(2, 102, line10, ""),
		}},
		{"far over without newline", line10 + "\n" + strings.Repeat("x", 100), []rec{
			obj(1, 0, line10, "\n"), over(2, 11, 100, ""),
		}},
		{"blank line over max", strings.Repeat(" ", 11) + "\n", []rec{
			over(1, 0, 11, "\n"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got := readAll(t, r, max)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("records differ (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestReaderHugeLine reads a 50 MB line whole with the default maximum, and
// skips it as oversized with a 1 MiB maximum, reading the next line right.
func TestReaderHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB line")
	}
	t.Parallel()
	const blob = 50 << 20
	var b bytes.Buffer
	b.WriteString(`{"blob":"`)
	b.Write(bytes.Repeat([]byte("x"), blob))
	b.WriteString(`"}` + "\n")
	first := int64(b.Len() - 1)
	b.WriteString(`{"next":1}` + "\n")
	in := b.Bytes()

	t.Run("default max", func(t *testing.T) {
		rd := NewReader(bytes.NewReader(in), 0)
		r, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if r.Shape != ShapeObject || r.Size != first || int64(len(r.Raw)) != first || r.EOL != "\n" {
			t.Fatalf("line 1: shape %v size %d len(raw) %d eol %q; want object, %d bytes", r.Shape, r.Size, len(r.Raw), r.EOL, first)
		}
		if got := len(r.Get("blob").Str); got != blob {
			t.Fatalf("line 1 blob has %d bytes, want %d", got, blob)
		}
		r, err = rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if r.Line != 2 || r.Offset != first+1 || string(r.Raw) != `{"next":1}` {
			t.Fatalf("line 2: line %d offset %d raw %q", r.Line, r.Offset, r.Raw)
		}
	})
	t.Run("1 MiB max", func(t *testing.T) {
		got := readAll(t, bytes.NewReader(in), 1<<20)
		want := []rec{
			{Line: 1, Offset: 0, Size: first, EOL: "\n", Shape: ShapeOversized, RawNil: true},
			obj(2, first+1, `{"next":1}`, "\n"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("records differ (-want +got):\n%s", diff)
		}
	})
}

func TestReaderReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("{\"a\":1}\n{\"b\""), iotest.ErrReader(boom))
	rd := NewReader(r, 0)
	if rec, err := rd.Next(); err != nil || rec.Line != 1 {
		t.Fatalf("line 1: %v, %v", rec, err)
	}
	_, err := rd.Next()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("line 2: error %v, want boom naming line 2", err)
	}
	if _, err2 := rd.Next(); !errors.Is(err2, boom) {
		t.Fatalf("after the error: %v, want the same error again", err2)
	}
	if rd.Line() != 1 || rd.Offset() != 8 {
		t.Fatalf("Line() = %d, Offset() = %d; want 1, 8", rd.Line(), rd.Offset())
	}
}

func TestRecordAccessors(t *testing.T) {
	t.Parallel()
	const line = `{"timestamp":"t","type":"response_item","payload":{"type":"message","id":"msg_1"}}`
	rd := NewReader(strings.NewReader(line+"\n"+`{"type":"message","id":null}`+"\n[1]\n"), 0)
	r, _ := rd.Next()
	if r.End() != int64(len(line))+1 || !r.Valid() || r.Type() != "response_item" || !r.HasType() {
		t.Errorf("line 1: End %d Valid %v Type %q HasType %v", r.End(), r.Valid(), r.Type(), r.HasType())
	}
	if got := r.Payload().Get("id").Str; got != "msg_1" {
		t.Errorf("payload id %q", got)
	}
	if off := r.PayloadOffset(); line[off:off+1] != "{" || !strings.HasPrefix(line[off:], `{"type":"message"`) {
		t.Errorf("PayloadOffset %d points at %q", off, line[off:])
	}
	if DetectEra(r) != EraEnvelope {
		t.Errorf("era %v", DetectEra(r))
	}
	r, _ = rd.Next()
	if r.Type() != "message" || r.Payload().Exists() || r.PayloadOffset() != -1 || DetectEra(r) != EraBare {
		t.Errorf("line 2: Type %q payload %v offset %d era %v", r.Type(), r.Payload().Exists(), r.PayloadOffset(), DetectEra(r))
	}
	r, _ = rd.Next()
	if r.Valid() || r.HasType() || r.Get("type").Exists() || DetectEra(r) != EraUnknown {
		t.Errorf("line 3 ([1]) reads as an object")
	}
}

// TestReaderDeepNesting: a line nested millions deep (a few MB, well under the
// line limit) must not overflow the stack, a fatal error no recover catches;
// it is reported invalid, and the lines around it read normally.
func TestReaderDeepNesting(t *testing.T) {
	t.Parallel()
	const n = 8 << 20
	deep := `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	unclosed := strings.Repeat("[", n)
	shallow := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	in := deep + "\n" + deep + `{"b":1}` + "\n" + unclosed + "\n" + shallow + "\n" + "{\"ok\":1}\n" + deep
	var off int64
	next := func(s string, eol string) int64 { o := off; off += int64(len(s) + len(eol)); return o }
	want := []rec{
		{Line: 1, Offset: next(deep, "\n"), Size: int64(len(deep)), EOL: "\n", Shape: ShapeInvalid, Raw: deep},
		{Line: 2, Offset: next(deep+`{"b":1}`, "\n"), Size: int64(len(deep) + 7), EOL: "\n", Shape: ShapeInvalid, Raw: deep + `{"b":1}`},
		{Line: 3, Offset: next(unclosed, "\n"), Size: n, EOL: "\n", Shape: ShapeInvalid, Raw: unclosed},
		obj(4, next(shallow, "\n"), shallow, "\n"),
		obj(5, next(`{"ok":1}`, "\n"), `{"ok":1}`, "\n"),
		{Line: 6, Offset: next(deep, ""), Size: int64(len(deep)), EOL: "", Shape: ShapeTorn, Raw: deep},
	}
	got := readAll(t, strings.NewReader(in), 0)
	// Compare without the multi-megabyte Raw strings in the diff.
	for i := range got {
		if i < len(want) && got[i].Raw == want[i].Raw {
			got[i].Raw, want[i].Raw = "(same)", "(same)"
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records differ (-want +got):\n%s", diff)
	}
}

// TestPayloadMembers: the members the validator notes on a Reader's pass
// are the ones Members finds walking the payload, for every line of the
// committed rollouts and of a set of awkward payloads, read in one stream
// so that each line reuses the last one's record.
func TestPayloadMembers(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"response_item","payload":{"type":"message","id":"x","content":[{"type":"input_text","text":"a"}],"n":{"type":"deep"}}}`,
		`{"payload" : { "a" : 1 , "b":{"c":{"d":2}}, "a":3 } , "type":"x"}`,
		`{"payload":"str"}`,
		`{"payload":[{"a":1}]}`,
		`{"payload":{}}`,
		`{"payload":{"a":1},"payload":{"b":2}}`,
		`{"payload":"s","payload":{"b":2}}`,
		`{"x":{"payload":{"a":1}},"payload":{"k\"\\":"v\"}"}}`,
		`{"payload":{"a":1},"b":{"c":2}}`,
		`{"payload":{"a":1}`,
		``,
		`{"payload":{"a":[1,{"b":2}],"c":"d"}} {"payload":{"e":1}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"hi","images":["data:x"]}}`,
	}, "\n") + "\n"
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in += string(b)
	}
	rd := NewReader(strings.NewReader(in), 0)
	defer rd.Release()
	noted := 0
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(walkedMembers(r.PayloadBytes()), payloadMembers(r)); diff != "" {
			t.Errorf("line %d %.80q: PayloadMembers differs from Members (-want +got):\n%s", r.Line, r.Raw, diff)
		}
		if r.payNoted {
			noted++
		}
	}
	if noted < 10 {
		t.Errorf("%d lines had their payload members noted, want the object payloads of the stream", noted)
	}
}

type member struct {
	Key        string
	Start, End int
}

// payloadMembers lists what rec.PayloadMembers walks.
func payloadMembers(rec *Record) []member {
	var ms []member
	rec.PayloadMembers(func(key []byte, start, end int) bool {
		ms = append(ms, member{string(key), start, end})
		return true
	})
	return ms
}

// walkedMembers lists what Members finds walking raw.
func walkedMembers(raw []byte) []member {
	var ms []member
	Members(raw, func(key []byte, start, end int) bool {
		ms = append(ms, member{string(key), start, end})
		return true
	})
	return ms
}
