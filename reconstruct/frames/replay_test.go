package frames_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rollout-dev/rollout/reconstruct/frames"
	"github.com/rollout-dev/rollout/rollout"
)

// got is an event reduced to what the table states.
type got struct {
	Kind   string
	Line   int
	Detail string // one fact that tells the case apart
}

var kindNames = map[frames.EventKind]string{
	frames.DeltaMismatch:   "mismatch",
	frames.Unterminated:    "unterminated",
	frames.SupersededBytes: "superseded",
	frames.UnknownType:     "unknown",
}

func detail(e frames.Event) string {
	switch f := e.Facts.(type) {
	case frames.MismatchFacts:
		return fmt.Sprintf("%v %v: %v", f.BlockKind, f.ContentIndex, f.Reason)
	case frames.UnterminatedFacts:
		return fmt.Sprintf("%v %v: %v", f.BlockKind, f.ContentIndex, f.Reason)
	case frames.SupersededFacts:
		return fmt.Sprintf("frames=%v streams=%v rejected=%v", f.Frames, f.Streams, f.RejectedStreams)
	case frames.UnknownTypeFacts:
		return fmt.Sprintf("%q x%v", f.Type, f.Count)
	}
	return ""
}

// replay runs the replay over a log the way the engine feeds it.
func replay(t *testing.T, log string, opts frames.Options) ([]frames.Event, []frames.Stream) {
	t.Helper()
	var evs []frames.Event
	var streams []frames.Stream
	rp := frames.NewReplay(opts, func(e frames.Event) { evs = append(evs, e) })
	rp.OnStream(func(s *frames.Stream) { streams = append(streams, *s) })
	rd := rollout.NewReader(strings.NewReader(log), 1<<20)
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		rp.Line(rec)
		switch rec.Shape {
		case rollout.ShapeObject:
			rp.Feed(rec.Raw)
		case rollout.ShapeConcatenated:
			for _, p := range rec.Parts {
				rp.Feed(rec.Raw[p[0]:p[1]])
			}
		}
	}
	rp.Finish()
	return evs, streams
}

// Short frames for the table: bare, no partial messages.
func start() string { return `{"type":"start"}` }
func bstart(k string, i int) string {
	return fmt.Sprintf(`{"type":"%s_start","contentIndex":%d}`, k, i)
}
func delta(k string, i int, d string) string {
	return fmt.Sprintf(`{"type":"%s_delta","contentIndex":%d,"delta":%q}`, k, i, d)
}
func end(i int, k, content string) string {
	return fmt.Sprintf(`{"type":"%s_end","contentIndex":%d,"content":%q}`, k, i, content)
}
func toolEnd(i int, args string) string {
	return fmt.Sprintf(`{"type":"toolcall_end","contentIndex":%d,"toolCall":{"type":"toolCall","id":"t1","name":"read","arguments":%s}}`, i, args)
}
func done(content string) string {
	return `{"type":"done","reason":"stop","message":{"role":"assistant","content":[` + content + `],"stopReason":"stop"}}`
}
func msgEnd(stop, content string) string {
	return `{"type":"message_end","message":{"role":"assistant","content":[` + content + `],"stopReason":"` + stop + `"}}`
}
func wrap(inner string) string {
	return `{"type":"message_update","assistantMessageEvent":` + inner + `,"message":{"role":"assistant","content":[]}}`
}
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestReplayEvents(t *testing.T) {
	const asstStart = `{"type":"message_start","message":{"role":"assistant","content":[]}}`
	hello := `{"type":"text","text":"Hello, world!"}`
	tests := []struct {
		name string
		log  string
		opts frames.Options
		want []got
	}{{
		name: "bare stream: deltas superseded by text_end",
		log:  lines(start(), bstart("text", 0), delta("text", 0, "Hello, "), delta("text", 0, "world!"), end(0, "text", "Hello, world!"), done(hello)),
		want: []got{{"superseded", 3, "frames=2 streams=1 rejected=0"}},
	}, {
		name: "wrapped stream confirmed by message_end, no *_end",
		log: lines(`{"type":"agent_start"}`, asstStart, wrap(bstart("thinking", 0)), wrap(delta("thinking", 0, "a")), wrap(delta("thinking", 0, "b")),
			msgEnd("stop", `{"type":"thinking","thinking":"ab"}`), `{"type":"turn_end"}`),
		want: []got{{"superseded", 4, "frames=2 streams=1 rejected=0"}},
	}, {
		name: "deltas differ from text_end",
		log:  lines(start(), delta("text", 0, "Hello, "), delta("text", 0, "!"), end(0, "text", "Hello, world!"), done(hello)),
		want: []got{{"mismatch", 4, "text 0: the 8 bytes of concatenated deltas differ from the 13 bytes of the text_end content from byte 7"}},
	}, {
		name: "deltas differ from done (no *_end)",
		log:  lines(start(), delta("text", 0, "Hello"), done(hello)),
		want: []got{{"mismatch", 3, "text 0: the 5 bytes of concatenated deltas differ from the 13 bytes of the done content from byte 5"}},
	}, {
		name: "message content of another kind",
		log:  lines(start(), delta("thinking", 0, "Hello, world!"), done(hello)),
		want: []got{{"mismatch", 3, `thinking 0: the message's content 0 is a "text", not a thinking block`}},
	}, {
		name: "tool call arguments compare as JSON values",
		log: lines(start(), bstart("toolcall", 0), delta("toolcall", 0, `{"path": "a.go", `), delta("toolcall", 0, `"n": 1.0, "s": "\u00e9\n", "l": [1e0, -0, null]}`),
			toolEnd(0, `{"l":[1,0,null],"n":1,"path":"a.go","s":"é\n"}`), done(`{"type":"toolCall","id":"t1","name":"read","arguments":{}}`)),
		want: []got{{"superseded", 3, "frames=2 streams=1 rejected=0"}},
	}, {
		name: "tool call arguments differ",
		log:  lines(start(), delta("toolcall", 0, `{"path": "a.go"}`), toolEnd(0, `{"path":"b.go"}`), done("")),
		want: []got{{"mismatch", 3, `toolcall 0: the 15 bytes of concatenated deltas (as JSON) differ from the 15 bytes of the toolcall_end arguments content from byte 9`}},
	}, {
		name: "tool call deltas are not JSON",
		log:  lines(start(), delta("toolcall", 0, `{"path": "a.go"`), toolEnd(0, `{"path":"a.go"}`), done("")),
		want: []got{{"mismatch", 3, `toolcall 0: the 15 bytes of concatenated deltas are not one JSON value (unexpected EOF)`}},
	}, {
		name: "delta after the block's end",
		log:  lines(start(), delta("text", 0, "Hi"), end(0, "text", "Hi"), delta("text", 0, "!"), done(`{"type":"text","text":"Hi!"}`)),
		want: []got{{"mismatch", 4, "text 0: a delta after the block's text_end on line 3"}},
	}, {
		name: "frame of another kind for a block",
		log:  lines(start(), delta("text", 0, "Hi"), end(0, "thinking", "Hi"), done("")),
		want: []got{{"mismatch", 3, "text 0: a thinking_end frame for the text block started on line 2"}},
	}, {
		name: "delta that is not a string",
		log:  lines(start(), `{"type":"text_delta","contentIndex":0,"delta":42}`, end(0, "text", ""), done("")),
		want: []got{{"mismatch", 2, "text 0: the delta is not a string"}},
	}, {
		name: "repeated end with the same content, then another",
		log:  lines(start(), delta("text", 0, "Hi"), end(0, "text", "Hi"), end(0, "text", "Hi"), end(0, "text", "Ho"), done("")),
		want: []got{{"mismatch", 5, "text 0: the content differs from the one confirmed on line 3"}},
	}, {
		name: "block started twice",
		log:  lines(start(), bstart("text", 0), delta("text", 0, "a"), bstart("text", 0), end(0, "text", "a"), done("")),
		want: []got{{"mismatch", 4, "text 0: contentIndex 0 starts again (first frame on line 2)"}},
	}, {
		name: "truncated at end of file: the open block is kept, the ended one superseded",
		log:  lines(start(), delta("thinking", 0, "a"), end(0, "thinking", "a"), bstart("text", 1), delta("text", 1, "Hel")),
		want: []got{{"unterminated", 4, "text 1: the log ends before the stream does"}, {"superseded", 2, "frames=1 streams=1 rejected=0"}},
	}, {
		name: "error frame: deltas without end are not confirmed",
		log:  lines(start(), delta("text", 0, "Hel"), `{"type":"error","reason":"aborted","error":{"role":"assistant","content":[{"type":"text","text":"Hel"}]}}`),
		want: []got{{"unterminated", 2, "text 0: the stream ended with error on line 3"}},
	}, {
		name: "aborted message_end does not confirm",
		log:  lines(asstStart, wrap(delta("text", 0, "Hel")), msgEnd("aborted", `{"type":"text","text":"Hel"}`)),
		want: []got{{"unterminated", 2, "text 0: the stream failed (message_end on line 3)"}},
	}, {
		name: "a new stream starts while one is open",
		log:  lines(start(), delta("text", 0, "a"), start(), delta("text", 0, "b"), done(`{"type":"text","text":"b"}`)),
		want: []got{{"unterminated", 2, "text 0: a new stream starts on line 3"}, {"superseded", 4, "frames=1 streams=1 rejected=0"}},
	}, {
		name: "turn_end while a stream is open",
		log:  lines(asstStart, wrap(delta("text", 0, "a")), `{"type":"turn_end"}`),
		want: []got{{"unterminated", 2, "text 0: turn_end on line 3 came before the stream ended"}},
	}, {
		name: "log starting mid-stream",
		log:  lines(delta("text", 0, "lo"), end(0, "text", "lo"), done(`{"type":"text","text":"lo"}`)),
		want: []got{{"superseded", 1, "frames=1 streams=1 rejected=0"}},
	}, {
		name: "user messages do not open streams",
		log:  lines(`{"type":"message_start","message":{"role":"user","content":"hi"}}`, `{"type":"message_end","message":{"role":"user","content":"hi"}}`),
	}, {
		name: "unreadable line inside a stream: kept whole, mismatch notes it",
		log:  lines(start(), delta("text", 0, "a"), `{"type":"text_delta","conten`, delta("text", 0, "c"), end(0, "text", "abc"), delta("thinking", 1, "x"), end(1, "thinking", "x"), done("")),
		want: []got{{"mismatch", 5, "text 0: the 2 bytes of concatenated deltas differ from the 3 bytes of the text_end content from byte 1 (line 3 of this stream could not be read)"}},
	}, {
		name: "a delta sharing its line with another frame: kept whole",
		log:  lines(start(), delta("text", 0, "a")+delta("text", 0, "b"), end(0, "text", "ab"), done("")),
	}, {
		name: "a kept frame over the byte cap",
		log:  lines(start(), delta("text", 0, "a"), `{"type":"text_end","contentIndex":0,"content":"a","pad":"`+strings.Repeat("x", 200)+`"}`, done("")),
		opts: frames.Options{MaxBytes: 150},
		want: []got{{"superseded", 1, "frames=0 streams=0 rejected=1"}},
	}, {
		name: "over the frame cap",
		log:  lines(start(), delta("text", 0, "a"), end(0, "text", "a"), `{"type":"tool_execution_update"}`, `{"type":"tool_execution_update"}`, done("")),
		opts: frames.Options{MaxFrames: 4},
		want: []got{{"superseded", 1, "frames=0 streams=0 rejected=1"}},
	}, {
		name: "unknown types, bare and wrapped, and a frame without type",
		log:  lines(`{"type":"agent_start"}`, `{"type":"session_stats"}`, wrap(`{"type":"image_delta","contentIndex":0}`), `{"type":"session_stats"}`, `{"kind":"x"}`),
		want: []got{{"unknown", 2, `"session_stats" x2`}, {"unknown", 3, `"image_delta" x1`}, {"unknown", 5, `"" x1`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs, _ := replay(t, tt.log, tt.opts)
			var g []got
			for _, e := range evs {
				g = append(g, got{kindNames[e.Kind], e.Line, detail(e)})
			}
			if diff := cmp.Diff(tt.want, g, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplayAccounting checks the byte and line accounting against the
// input itself: the superseded bytes are the delta lines, terminators
// included, and the ratio is against the whole log.
func TestReplayAccounting(t *testing.T) {
	d1, d2 := delta("text", 0, "Hello, "), delta("text", 0, "world!")
	log := lines(`{"type":"agent_start"}`, start(), bstart("text", 0), d1, d2, end(0, "text", "Hello, world!"), done(`{"type":"text","text":"Hello, world!"}`), "", `{"type":"agent_end"}`)
	log = strings.Replace(log, d2+"\n", d2+"\r\n", 1)
	evs, streams := replay(t, log, frames.Options{})
	want := int64(len(d1) + 1 + len(d2) + 2)
	if len(evs) != 1 || evs[0].Kind != frames.SupersededBytes {
		t.Fatalf("events %+v, want one superseded-bytes", evs)
	}
	f := evs[0].Facts.(frames.SupersededFacts)
	if f.Bytes != want || f.LogBytes != int64(len(log)) {
		t.Errorf("bytes %v of %v, want %d of %d", f.Bytes, f.LogBytes, want, len(log))
	}
	if evs[0].Offset != int64(strings.Index(log, d1)) {
		t.Errorf("offset %d, want the first delta's line start %d", evs[0].Offset, strings.Index(log, d1))
	}
	if len(streams) != 1 {
		t.Fatalf("%d streams", len(streams))
	}
	s := streams[0]
	if s.FirstLine != 2 || s.LastLine != 7 || s.Lines != 6 || s.Terminal != "done" || s.Status != frames.Reclaimed || s.DropFrames != 2 || s.DropBytes != want {
		t.Errorf("stream %+v", s)
	}
	streamBytes := int64(strings.Index(log, `{"type":"done"`) + len(done(`{"type":"text","text":"Hello, world!"}`)) + 1 - strings.Index(log, start()))
	if s.Bytes != streamBytes {
		t.Errorf("stream bytes %d, want %d", s.Bytes, streamBytes)
	}
}

// TestContentsSources checks the final content and where it comes from.
func TestContentsSources(t *testing.T) {
	log := lines(start(),
		bstart("thinking", 0), delta("thinking", 0, "th"), end(0, "thinking", "th"),
		delta("text", 1, "te"), delta("text", 1, "xt"),
		bstart("text", 2),
		done(`{"type":"thinking","thinking":"th"},{"type":"text","text":"text"},{"type":"text","text":""},{"type":"image","data":"AA=="}`),
		start(), delta("text", 0, "cut"))
	streams, err := frames.Contents(strings.NewReader(log), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []frames.Stream{{
		Blocks: []frames.Block{
			{Index: 0, Kind: "thinking", Content: "th", Source: "end"},
			{Index: 1, Kind: "text", Content: "text", Source: "message"},
			{Index: 2, Kind: "text", Content: "", Source: "message"},
			{Index: 3, Kind: "image", Content: `{"type":"image","data":"AA=="}`, Source: "message"},
		},
		Terminal: "done",
	}, {
		Blocks: []frames.Block{{Index: 0, Kind: "text", Content: "cut", Source: "deltas"}},
	}}
	opt := cmpopts.IgnoreFields(frames.Stream{}, "FirstLine", "LastLine", "Lines", "Bytes", "Status", "Reason", "DropFrames", "DropBytes", "Drop")
	if diff := cmp.Diff(want, streams, opt); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
}

func TestReplayNeverPanics(t *testing.T) {
	// Shapes a frame log should not have; the replay must shrug them off.
	odd := []string{
		`{"type":"message_update"}`, `{"type":"message_update","assistantMessageEvent":[]}`,
		`{"type":"message_update","assistantMessageEvent":{"type":7}}`, `{"type":"text_delta"}`,
		`{"type":"text_delta","contentIndex":-1,"delta":"x"}`, `{"type":"text_delta","contentIndex":1e3,"delta":"x"}`,
		`{"type":"done","message":null}`, `{"type":"done","message":{"content":{}}}`, `{"type":"done","message":{"content":[1,"x",null]}}`,
		`{"type":"message_end","message":"x"}`, `{"type":"toolcall_end","contentIndex":0,"toolCall":[]}`,
		`{"type":"text_end","contentIndex":0,"content":null}`, `{"type":"start"}`,
	}
	var b bytes.Buffer
	for i := range 3 {
		for j, l := range odd {
			b.WriteString(odd[(i+j)%len(odd)])
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	replay(t, b.String(), frames.Options{})
	replay(t, strings.Join(odd, "\n"), frames.Options{})
}
