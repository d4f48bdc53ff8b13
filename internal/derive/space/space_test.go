package space_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
	"github.com/rollout-dev/rollout/rollout"
)

func account(t *testing.T, data []byte, opts space.Options) (*space.File, []space.Bucket) {
	t.Helper()
	a := space.New(opts)
	rd := rollout.NewReader(bytes.NewReader(data), 0)
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		a.Feed(rec)
	}
	return a.Finish()
}

// oracle computes the bloat figures from the generated file with gjson, a
// different reader from the one under test.
type oracle struct {
	superseded, dupExec int64
	compactions         int
	strings             map[string]int // large strings -> occurrences
}

func scan(t *testing.T, data []byte, minRepeat int) oracle {
	t.Helper()
	o := oracle{strings: map[string]int{}}
	var rhs []int64
	outputs := map[string]string{}
	type exec struct{ id, raw string }
	var execs []exec
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		v := gjson.Parse(line)
		switch v.Get("type").String() {
		case "compacted":
			rhs = append(rhs, int64(len(v.Get("payload.replacement_history").Raw)))
		case "response_item":
			if v.Get("payload.type").String() == "function_call_output" {
				outputs[v.Get("payload.call_id").String()] = v.Get("payload.output").Raw
			}
		case "event_msg":
			if v.Get("payload.item.type").String() == "CommandExecution" {
				for _, f := range []string{"stdout", "stderr", "aggregatedOutput", "formattedOutput"} {
					if r := v.Get("payload.item." + f); r.Exists() {
						execs = append(execs, exec{v.Get("payload.item.id").String(), r.Raw})
					}
				}
			}
		}
		var walk func(r gjson.Result)
		walk = func(r gjson.Result) {
			switch {
			case r.IsObject() || r.IsArray():
				r.ForEach(func(_, x gjson.Result) bool { walk(x); return true })
			case r.Type == gjson.String && len(r.Raw) >= minRepeat:
				o.strings[r.Raw]++
			}
		}
		walk(v)
	}
	o.compactions = len(rhs)
	for _, n := range rhs[:max(len(rhs)-1, 0)] {
		o.superseded += n
	}
	for _, e := range execs {
		if outputs[e.id] == e.raw {
			o.dupExec += int64(len(e.raw))
		}
	}
	return o
}

func TestAccountBloatShapes(t *testing.T) {
	for _, opts := range []bloatgen.Options{
		{},
		{Turns: 10, CompactEach: 3, Images: 4, ImageBytes: 9000, SubAgents: 1},
		{Turns: 5, NoCompaction: true, OutputBytes: 300, SubAgents: 4},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			paths, err := bloatgen.Write(t.TempDir(), opts)
			if err != nil {
				t.Fatal(err)
			}
			var parentID string
			for i, p := range paths {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				f, classes := account(t, data, space.Options{})
				want := scan(t, data, space.DefaultMinRepeat)
				if f.Bytes != int64(len(data)) {
					t.Errorf("Bytes = %d, want %d", f.Bytes, len(data))
				}
				var typeSum, classSum int64
				for _, b := range f.ByType {
					typeSum += b.Bytes
				}
				for _, b := range classes {
					classSum += b.Bytes
				}
				if typeSum != f.Bytes || classSum != f.Bytes {
					t.Errorf("by type sums to %d, by class to %d; the file has %d bytes", typeSum, classSum, f.Bytes)
				}
				if f.Compactions != want.compactions || f.SupersededCheckpoints != want.superseded {
					t.Errorf("compactions %d, superseded %d; want %d, %d", f.Compactions, f.SupersededCheckpoints, want.compactions, want.superseded)
				}
				if f.DuplicateExecOutput != want.dupExec || want.dupExec == 0 {
					t.Errorf("duplicate exec output %d, want %d (> 0)", f.DuplicateExecOutput, want.dupExec)
				}
				var wasted int64
				repeated := 0
				for s, n := range want.strings {
					if n > 1 {
						wasted += int64(n-1) * int64(len(s))
						repeated++
					}
				}
				if f.RepeatWasted != wasted {
					t.Errorf("repeat waste %d, want %d over %d strings", f.RepeatWasted, wasted, repeated)
				}
				if i == 0 {
					parentID = f.ThreadID
					if f.ParentThreadID != "" {
						t.Errorf("the parent has parent %q", f.ParentThreadID)
					}
				} else if f.ParentThreadID != parentID || parentID == "" {
					t.Errorf("sub-agent %d has parent %q, want %q", i, f.ParentThreadID, parentID)
				}
			}
		})
	}
}

// The image of the first turn is in the first user message and in every
// compaction's replacement_history after it.
func TestRepeatedImageCount(t *testing.T) {
	paths, err := bloatgen.Write(t.TempDir(), bloatgen.Options{Turns: 10, Images: 1, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(paths[0])
	f, _ := account(t, data, space.Options{})
	if len(f.Repeats) == 0 {
		t.Fatal("no repeats")
	}
	top := f.Repeats[0]
	if top.Count != 11 || !strings.HasPrefix(top.Class, "message.content[].image_url") || top.FirstLine != 3 {
		t.Errorf("top repeat %+v, want 11 copies of message.content[].image_url first on line 3", top)
	}
}

// Cuts remove exactly the planned members and leave every line valid JSON.
func TestCutsKeepLinesValid(t *testing.T) {
	paths, err := bloatgen.Write(t.TempDir(), bloatgen.Options{Turns: 6, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(paths[0])
	f, _ := account(t, data, space.Options{Plan: true})
	if len(f.Cuts) == 0 {
		t.Fatal("no cuts planned")
	}
	var out bytes.Buffer
	pos := 0
	for _, c := range f.Cuts {
		at := int(c.LineOffset) + c.Start
		out.Write(data[pos:at])
		out.WriteString(c.Repl)
		pos = int(c.LineOffset) + c.End
	}
	out.Write(data[pos:])
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	compactions := 0
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not valid JSON after the cuts: %.200s", i+1, l)
		}
		v := gjson.Parse(l)
		if v.Get("payload.item.type").String() == "CommandExecution" && (v.Get("payload.item.stdout").Exists() || v.Get("payload.item.aggregatedOutput").Exists()) {
			t.Errorf("line %d keeps duplicated command output", i+1)
		}
		if v.Get("type").String() == "compacted" {
			compactions++
			empty := v.Get("payload.replacement_history").Raw == "[]"
			if last := compactions == 6; empty == last {
				t.Errorf("compaction %d: emptied=%v", compactions, empty)
			}
		}
	}
}

// Hostile shapes: a new key on every line and deep nesting stay bounded.
func TestAccountBounded(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&b, `{"timestamp":"2026-03-10T09:00:00.000Z","type":"world_state","payload":{"full":false,"state":{"k%d":1}}}`+"\n", i)
	}
	b.WriteString(`{"timestamp":"2026-03-10T09:00:00.000Z","type":"event_msg","payload":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}\n")
	f, classes := account(t, b.Bytes(), space.Options{})
	if !f.ClassesCapped || len(classes) > 4097 {
		t.Errorf("classes capped=%v, %d classes", f.ClassesCapped, len(classes))
	}
	var sum int64
	for _, c := range classes {
		sum += c.Bytes
	}
	if sum != int64(b.Len()) {
		t.Errorf("classes sum to %d, want %d", sum, b.Len())
	}
}

// before-turn N: the checkpoint a rollback of N user turns falls back to is
// the newest compaction before the Nth-newest user turn; what comes before
// it goes, messages excepted, and nothing after it.
func TestBeforeTurn(t *testing.T) {
	paths, err := bloatgen.Write(t.TempDir(), bloatgen.Options{Turns: 8, CompactEach: 2, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(paths[0])
	f, _ := account(t, data, space.Options{Plan: true})
	lines := strings.Split(string(data), "\n")
	var turns, compactions []int
	for i, l := range lines {
		switch gjson.Get(l, "payload.type").String() {
		case "task_started":
			turns = append(turns, i+1)
		}
		if gjson.Get(l, "type").String() == "compacted" {
			compactions = append(compactions, i+1)
		}
	}
	if len(turns) != 8 || len(compactions) != 4 {
		t.Fatalf("%d turns, %d compactions", len(turns), len(compactions))
	}
	// Compactions follow turns 2, 4, 6, 8: keeping 3 turns (6, 7, 8) falls
	// back to the compaction after turn 4.
	line, cuts := f.BeforeTurn(3, turns)
	if line != compactions[1] {
		t.Fatalf("checkpoint at line %d, want %d", line, compactions[1])
	}
	checkpoints := 0
	for _, c := range cuts {
		if c.Line >= line {
			t.Errorf("cut at line %d, after the checkpoint", c.Line)
		}
		kind := gjson.Get(lines[c.Line-1], "payload.type").String()
		if kind == "message" {
			t.Errorf("a message is cut at line %d", c.Line)
		}
		if c.Path == "payload.replacement_history" {
			checkpoints++
		}
	}
	if checkpoints != 1 || len(cuts) < 8 {
		t.Errorf("%d checkpoints and %d cuts in all", checkpoints, len(cuts))
	}
	if l, c := f.BeforeTurn(8, turns); l != 0 || c != nil {
		t.Errorf("keeping every turn cuts %d ranges", len(c))
	}
	if l, _ := f.BeforeTurn(3, append(turns[:0:0], turns[:1]...)); l != 0 {
		t.Errorf("one user turn, checkpoint %d", l)
	}
}
