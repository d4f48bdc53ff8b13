package frames_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/framegen"
	"github.com/rollout-dev/rollout/reconstruct/frames"
	"github.com/rollout-dev/rollout/rollout"
)

var update = flag.Bool("update", false, "rewrite the reclaimed goldens in fixtures/frames")

// randomLog draws generator options: every style, 1-4 blocks of any kind
// (some with no delta at all), with or without *_start and *_end frames.
func randomLog(rng *rand.Rand) framegen.Options {
	kinds := []string{framegen.Text, framegen.Thinking, framegen.ToolCall, framegen.ReasoningSummary}
	o := framegen.Options{
		Seed:           rng.Uint64(),
		Turns:          1 + rng.IntN(3),
		IncrementBytes: 1 + rng.IntN(200),
		Style:          framegen.Style(rng.IntN(3)),
		NoStarts:       rng.IntN(4) == 0,
		NoEnds:         rng.IntN(4) == 0,
	}
	for range 1 + rng.IntN(4) {
		o.Blocks = append(o.Blocks, framegen.BlockSpec{Kind: kinds[rng.IntN(len(kinds))], Increments: rng.IntN(12)})
	}
	return o
}

// splitLines splits a log into physical lines, terminators kept.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// deltaLine tells, independently of the package, whether a line is a delta
// frame: a bare *_delta or a message_update wrapping one.
func deltaLine(line []byte) bool {
	var f struct {
		Type  string `json:"type"`
		Event struct {
			Type string `json:"type"`
		} `json:"assistantMessageEvent"`
	}
	if json.Unmarshal(line, &f) != nil {
		return false
	}
	t := f.Type
	if t == "message_update" {
		t = f.Event.Type
	}
	return strings.HasSuffix(t, "_delta")
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestReclaimProperty: over generated logs, complete and truncated (at a
// line boundary or mid-line), reclamation drops only delta lines, keeps
// every other line byte for byte and in order, and replaying what it keeps
// yields the same final content as the original, which for every finished
// block is the generator's truth.
func TestReclaimProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	n := 400
	if testing.Short() {
		n = 60
	}
	for i := range n {
		o := randomLog(rng)
		var buf bytes.Buffer
		st, err := framegen.Write(&buf, o)
		if err != nil {
			t.Fatal(err)
		}
		log := buf.Bytes()
		cut := "complete"
		lost := 0 // the line where a lost delta was
		switch rng.IntN(4) {
		case 1:
			ls := splitLines(log)
			log = bytes.Join(ls[:rng.IntN(len(ls)+1)], nil)
			cut = "at a line boundary"
		case 2:
			log = log[:rng.IntN(len(log)+1)]
			cut = "mid-line"
		case 3:
			log, lost = loseDelta(rng, log)
			cut = "a delta lost"
		}
		ok := t.Run("", func(t *testing.T) {
			if lost > 0 {
				checkLost(t, log, lost)
				return
			}
			checkReclaim(t, log, st, cut == "complete")
		})
		if !ok {
			t.Fatalf("case %d (%s): options %+v", i, cut, o)
		}
	}
}

func checkReclaim(t *testing.T, log []byte, st *framegen.Stats, complete bool) {
	p, err := frames.Plan(bytes.NewReader(log), 0, frames.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := frames.Apply(bytes.NewReader(log), &out, p); err != nil {
		t.Fatal(err)
	}

	// Only delta lines go, the rest stays byte for byte.
	var want bytes.Buffer
	dropped := 0
	for i, l := range splitLines(log) {
		if p.Dropped(i + 1) {
			dropped++
			if !deltaLine(l) {
				t.Fatalf("line %d is dropped but is not a delta frame: %.120s", i+1, l)
			}
			continue
		}
		want.Write(l)
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Fatal("Apply's output is not the log without the dropped lines")
	}
	if dropped != p.Frames || p.BytesAfter != int64(out.Len()) || p.BytesBefore != int64(len(log)) {
		t.Fatalf("plan says %d frames, %d -> %d bytes; got %d lines dropped, %d -> %d bytes",
			p.Frames, p.BytesBefore, p.BytesAfter, dropped, len(log), out.Len())
	}
	if complete && p.Frames != st.Deltas {
		t.Fatalf("complete log: %d of %d deltas dropped", p.Frames, st.Deltas)
	}

	// Replaying the kept frames gives the same final content.
	before, err := frames.Contents(bytes.NewReader(log), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, err := frames.Contents(bytes.NewReader(out.Bytes()), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != len(after) {
		t.Fatalf("%d streams before, %d after", len(before), len(after))
	}
	for i := range before {
		if diff := cmp.Diff(before[i].Blocks, after[i].Blocks); diff != "" || before[i].Terminal != after[i].Terminal {
			t.Fatalf("stream %d: terminal %q -> %q, blocks (-before +after):\n%s", i, before[i].Terminal, after[i].Terminal, diff)
		}
	}
	if err := frames.Check(bytes.NewReader(log), 0, p); err != nil {
		t.Fatalf("Check: %v", err)
	}

	// The content is the generator's: exactly for finished blocks, a
	// prefix for cut-off text.
	if complete && len(after) != len(st.Streams) {
		t.Fatalf("%d streams replayed, %d generated", len(after), len(st.Streams))
	}
	for i, s := range after {
		if i >= len(st.Streams) {
			t.Fatalf("stream %d was not generated", i)
		}
		truth := st.Streams[i].Blocks
		for _, b := range s.Blocks {
			if b.Index >= len(truth) {
				t.Fatalf("stream %d: block %d was not generated", i, b.Index)
			}
			tb := truth[b.Index]
			switch {
			case b.Kind != tb.Kind:
				t.Fatalf("stream %d block %d: kind %s, generated %s", i, b.Index, b.Kind, tb.Kind)
			case b.Source == "deltas" || b.Source == "start":
				if b.Kind != framegen.ToolCall && !strings.HasPrefix(tb.Content, b.Content) {
					t.Fatalf("stream %d block %d: unterminated content is not a prefix of the generated one", i, b.Index)
				}
			case b.Kind == framegen.ToolCall:
				if !jsonEqual(b.Content, tb.Content) {
					t.Fatalf("stream %d block %d: arguments %.80s, generated %.80s", i, b.Index, b.Content, tb.Content)
				}
			case b.Content != tb.Content:
				t.Fatalf("stream %d block %d: content from %s differs from the generated one", i, b.Index, b.Source)
			}
		}
		if complete && (s.Terminal == "" || len(s.Blocks) != len(truth)) {
			t.Fatalf("complete stream %d: terminal %q, %d of %d blocks", i, s.Terminal, len(s.Blocks), len(truth))
		}
	}

	// Reclaiming again finds nothing.
	p2, err := frames.Plan(bytes.NewReader(out.Bytes()), 0, frames.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p2.Frames != 0 {
		t.Fatalf("a second reclamation drops %d more frames", p2.Frames)
	}
}

// TestCheckCatchesBadPlans: the proof fails for plans that lose content.
func TestCheckCatchesBadPlans(t *testing.T) {
	log := lines(start(), bstart("text", 0), delta("text", 0, "Hel"), delta("text", 0, "lo"), end(0, "text", "Hello"),
		start(), bstart("text", 0), delta("text", 0, "cut"))
	good, err := frames.Plan(strings.NewReader(log), 0, frames.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]frames.Range{{3, 4}}, good.Drop); diff != "" {
		t.Fatalf("plan (-want +got):\n%s", diff)
	}
	if err := frames.Check(strings.NewReader(log), 0, good); err != nil {
		t.Fatalf("the right plan fails: %v", err)
	}
	for _, bad := range []struct {
		name string
		drop []frames.Range
	}{
		{"drops the text_end", []frames.Range{{3, 5}}},
		{"drops one superseded delta only", []frames.Range{{3, 3}}},
		{"drops the deltas of an unterminated block", []frames.Range{{3, 4}, {8, 8}}},
	} {
		p := *good
		p.Drop = bad.drop
		if err := frames.Check(strings.NewReader(log), 0, &p); err == nil {
			t.Errorf("%s: Check passes", bad.name)
		}
	}
}

// TestReclaimGoldens: the committed fixtures and what reclamation makes of
// them. Fails both ways: the golden must differ from the input (something
// is reclaimed) and equal the output.
func TestReclaimGoldens(t *testing.T) {
	ins, err := filepath.Glob("../../fixtures/frames/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range ins {
		if strings.HasSuffix(in, ".reclaimed.jsonl") {
			continue
		}
		n++
		log, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		p, err := frames.Plan(bytes.NewReader(log), 0, frames.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := frames.Apply(bytes.NewReader(log), &out, p); err != nil {
			t.Fatal(err)
		}
		golden := strings.TrimSuffix(in, ".jsonl") + ".reclaimed.jsonl"
		if *update {
			if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if bytes.Equal(want, log) {
			t.Errorf("%s: the golden is the input: nothing reclaimed", golden)
		}
		if !bytes.Equal(want, out.Bytes()) {
			t.Errorf("%s: reclaiming %s gives %d bytes, the golden has %d", golden, in, out.Len(), len(want))
		}
		if err := frames.Check(bytes.NewReader(log), 0, p); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	if n == 0 {
		t.Fatal("no fixtures in fixtures/frames")
	}
}

func TestDropped(t *testing.T) {
	p := &frames.Reclamation{Drop: []frames.Range{{3, 4}, {7, 7}, {10, 12}}}
	var got []int
	for l := 1; l <= 13; l++ {
		if p.Dropped(l) {
			got = append(got, l)
		}
	}
	if diff := cmp.Diff([]int{3, 4, 7, 10, 11, 12}, got); diff != "" {
		t.Error(diff)
	}
}

// TestApplyLongLines: Apply copies lines of any length, including a last
// line without terminator, and drops by line number.
func TestApplyLongLines(t *testing.T) {
	long := strings.Repeat("x", 600<<10)
	log := "a\n" + long + "\n" + "b\r\n" + long + "\n" + "tail"
	p := &frames.Reclamation{Drop: []frames.Range{{2, 2}}}
	var out bytes.Buffer
	n, err := frames.Apply(strings.NewReader(log), &out, p)
	if err != nil {
		t.Fatal(err)
	}
	want := "a\n" + "b\r\n" + long + "\n" + "tail"
	if out.String() != want || n != int64(len(want)) {
		t.Errorf("got %d bytes, want %d", out.Len(), len(want))
	}
}

// loseDelta removes one non-empty text-like delta line, as a lossy logger
// would, from a block with at least two deltas (a block left without any
// looks like a reclaimed one). line is where it was (the next line now); 0:
// none to lose.
func loseDelta(rng *rand.Rand, log []byte) (out []byte, line int) {
	ls := splitLines(log)
	type key struct{ stream, index int }
	deltas := map[key]int{}
	var cands []int
	var keys []key
	stream := 0
	for i, l := range ls {
		var f struct {
			Type         string
			Delta        string
			ContentIndex int
			Message      struct{ Role string }
			Event        struct {
				Type         string
				Delta        string
				ContentIndex int
			} `json:"assistantMessageEvent"`
		}
		if json.Unmarshal(l, &f) != nil {
			continue
		}
		if f.Type == "start" || (f.Type == "message_start" && f.Message.Role == "assistant") {
			stream++
		}
		if f.Type == "message_update" {
			f.Type, f.Delta, f.ContentIndex = f.Event.Type, f.Event.Delta, f.Event.ContentIndex
		}
		if !strings.HasSuffix(f.Type, "_delta") {
			continue
		}
		k := key{stream, f.ContentIndex}
		deltas[k]++
		if f.Type != "toolcall_delta" && f.Delta != "" {
			cands = append(cands, i)
			keys = append(keys, k)
		}
	}
	n := 0
	for j, i := range cands {
		if deltas[keys[j]] >= 2 {
			cands[n] = i
			n++
		}
	}
	cands = cands[:n]
	if len(cands) == 0 {
		return log, 0
	}
	i := cands[rng.IntN(len(cands))]
	return bytes.Join(append(ls[:i:i], ls[i+1:]...), nil), i + 1
}

// checkLost: a stream that lost a delta is reported and never reclaimed;
// the plan is still sound for the other streams.
func checkLost(t *testing.T, log []byte, line int) {
	var mismatches int
	rp := frames.NewReplay(frames.Options{}, func(e frames.Event) {
		if e.Kind == frames.DeltaMismatch {
			mismatches++
		}
	})
	feedAll(rp, log)
	if mismatches != 1 {
		t.Fatalf("%d delta mismatches reported for one lost delta", mismatches)
	}
	p, err := frames.Plan(bytes.NewReader(log), 0, frames.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Streams {
		if s.FirstLine <= line && line <= s.LastLine && s.Status == frames.Reclaimed {
			t.Fatalf("the stream on lines %d-%d lost a delta at line %d but is reclaimed", s.FirstLine, s.LastLine, line)
		}
	}
	if err := frames.Check(bytes.NewReader(log), 0, p); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// feedAll feeds a whole log to a replay, as the engine does.
func feedAll(rp *frames.Replay, log []byte) {
	rd := rollout.NewReader(bytes.NewReader(log), 0)
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		rp.Line(rec)
		if rec.Shape == rollout.ShapeObject {
			rp.Feed(rec.Raw)
		}
	}
	rp.Finish()
}
