package framegen

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite fixtures/frames/*.jsonl")

func generate(t *testing.T, o Options) ([]byte, *Stats) {
	t.Helper()
	var b bytes.Buffer
	st, err := Write(&b, o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(b.Len()) || st.Lines != bytes.Count(b.Bytes(), []byte("\n")) {
		t.Fatalf("stats say %d bytes, %d lines; wrote %d bytes, %d lines", st.Bytes, st.Lines, b.Len(), bytes.Count(b.Bytes(), []byte("\n")))
	}
	return b.Bytes(), st
}

func TestDeterministic(t *testing.T) {
	o := Options{Seed: 5, Turns: 2, IncrementBytes: 50, Blocks: []BlockSpec{{Thinking, 5}, {ToolCall, 4}}}
	a, _ := generate(t, o)
	b, _ := generate(t, o)
	if !bytes.Equal(a, b) {
		t.Error("same options, different bytes")
	}
	o.Seed++
	if c, _ := generate(t, o); bytes.Equal(a, c) {
		t.Error("another seed, same bytes")
	}
}

// frame is a generated line decoded with encoding/json, independently of
// the replay under test elsewhere.
type frame struct {
	Type         string          `json:"type"`
	ContentIndex *int            `json:"contentIndex"`
	Delta        *string         `json:"delta"`
	Content      *string         `json:"content"`
	ToolCall     json.RawMessage `json:"toolCall"`
	Event        *frame          `json:"assistantMessageEvent"`
	Message      json.RawMessage `json:"message"`
	Partial      json.RawMessage `json:"partial"`
}

// TestFramesMatchTruth decodes every line of every style and checks the
// protocol: deltas concatenate to the *_end content (tool calls: the
// arguments as a JSON value), which is the truth Write returns.
func TestFramesMatchTruth(t *testing.T) {
	for _, style := range []Style{Wrapped, Bare, Lean} {
		o := Options{Seed: 9, Turns: 3, IncrementBytes: 37, Style: style,
			Blocks: []BlockSpec{{Thinking, 6}, {Text, 3}, {ToolCall, 5}, {ReasoningSummary, 2}, {Text, 0}}}
		log, st := generate(t, o)
		acc := map[int]string{}
		streams, blocks := 0, 0
		for i, line := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
			var f frame
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("style %d line %d: %v", style, i+1, err)
			}
			if f.Type == "message_update" {
				if f.Event == nil || f.Message == nil || f.Event.Partial == nil {
					t.Fatalf("line %d: a wrapper without event, message or partial", i+1)
				}
				f = *f.Event
			}
			if (style == Lean) != (f.Partial == nil) && strings.Contains(f.Type, "_") && f.ContentIndex != nil {
				t.Fatalf("style %d line %d: partial present = %v", style, i+1, f.Partial != nil)
			}
			switch {
			case f.Type == "start" || (f.Type == "message_start" && strings.Contains(string(f.Message), `"role":"assistant"`)):
				streams++
				acc = map[int]string{}
			case f.ContentIndex == nil:
			case strings.HasSuffix(f.Type, "_delta"):
				acc[*f.ContentIndex] += *f.Delta
			case strings.HasSuffix(f.Type, "_end"):
				truth := st.Streams[streams-1].Blocks[*f.ContentIndex]
				blocks++
				if f.Type == "toolcall_end" {
					var tc struct{ Arguments json.RawMessage }
					if err := json.Unmarshal(f.ToolCall, &tc); err != nil {
						t.Fatal(err)
					}
					if !sameJSON(t, string(tc.Arguments), truth.Content) || !sameJSON(t, acc[*f.ContentIndex], truth.Content) {
						t.Fatalf("line %d: tool call arguments, deltas and truth disagree", i+1)
					}
					continue
				}
				if *f.Content != truth.Content || acc[*f.ContentIndex] != truth.Content {
					t.Fatalf("line %d: %s content, deltas and truth disagree", i+1, f.Type)
				}
			}
		}
		if streams != o.Turns || blocks != o.Turns*len(o.Blocks) {
			t.Errorf("style %d: %d streams, %d blocks ended; want %d, %d", style, streams, blocks, o.Turns, o.Turns*len(o.Blocks))
		}
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %.80s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %.80s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestQuadraticGrowth: the issue's example, 200 increments of 1 KiB, is
// about 40 MiB in the wrapped style; doubling the increments quadruples it,
// while lean frames grow linearly.
func TestQuadraticGrowth(t *testing.T) {
	size := func(o Options) int64 {
		st, err := Write(io.Discard, o)
		if err != nil {
			t.Fatal(err)
		}
		return st.Bytes
	}
	n200 := size(Options{})
	if n200 < 38<<20 || n200 > 46<<20 {
		t.Errorf("200 x 1 KiB wrapped: %d bytes, want about 40 MiB", n200)
	}
	n100 := size(Options{Blocks: []BlockSpec{{Text, 100}}})
	if r := float64(n200) / float64(n100); r < 3.6 || r > 4.4 {
		t.Errorf("doubling the increments grows the log %.2fx, want about 4x", r)
	}
	lean200 := size(Options{Style: Lean})
	lean100 := size(Options{Style: Lean, Blocks: []BlockSpec{{Text, 100}}})
	if r := float64(lean200) / float64(lean100); r < 1.8 || r > 2.2 {
		t.Errorf("lean frames: doubling the increments grows the log %.2fx, want about 2x", r)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Blocks: []BlockSpec{{"image", 1}}}, {Blocks: []BlockSpec{{Text, -1}}}} {
		if _, err := Write(io.Discard, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// fixtures are the sample logs committed in fixtures/frames (README.md
// there says what each shows).
var fixtures = []struct {
	name string
	opts Options
	cut  int // keep only this many lines (0: all)
}{
	{"wrapped", Options{Seed: 1, Turns: 2, IncrementBytes: 24, Blocks: []BlockSpec{{Thinking, 6}, {Text, 4}, {ToolCall, 3}}}, 0},
	{"bare", Options{Seed: 2, Style: Bare, IncrementBytes: 24, Blocks: []BlockSpec{{Thinking, 4}, {Text, 4}}}, 0},
	{"lean", Options{Seed: 3, Style: Lean, NoStarts: true, IncrementBytes: 24, Blocks: []BlockSpec{{Text, 5}, {ToolCall, 3}, {ReasoningSummary, 2}}}, 0},
	// Killed in turn 2 after three text deltas.
	{"truncated", Options{Seed: 4, Turns: 2, IncrementBytes: 24, Blocks: []BlockSpec{{Thinking, 4}, {Text, 6}}}, 35},
}

func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		log, _ := generate(t, fx.opts)
		if fx.cut > 0 {
			ls := bytes.SplitAfter(log, []byte("\n"))
			log = bytes.Join(ls[:fx.cut], nil)
		}
		path := filepath.Join("..", "..", "..", "..", "fixtures", "frames", fx.name+".jsonl")
		if *update {
			if err := os.WriteFile(path, log, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, log) {
			t.Errorf("%s is stale: regenerate with go test ./internal/testkit/fixturegen/framegen -update", path)
		}
	}
}

func ExampleWrite() {
	st, err := Write(io.Discard, Options{Style: Wrapped, IncrementBytes: 1024, Blocks: []BlockSpec{{Text, 200}}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d lines, %d deltas, %.0f MiB\n", st.Lines, st.Deltas, float64(st.Bytes)/(1<<20))
	// Output: 210 lines, 200 deltas, 42 MiB
}
