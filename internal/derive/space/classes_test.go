package space_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// classOracle is the path-class table of enveloped lines computed with
// gjson, another reader than the account's walk: every leaf of a payload
// counts at its path (keys as written, arrays as []) under the payload's type, the other
// top-level members as (envelope), and the rest of each line as keys and
// punctuation.
func classOracle(data []byte) map[string]int64 {
	out := map[string]int64{}
	var walk func(path string, v gjson.Result) int64
	walk = func(path string, v gjson.Result) int64 {
		switch {
		case v.IsObject():
			var n int64
			v.ForEach(func(k, x gjson.Result) bool { n += walk(path+"."+k.Raw[1:len(k.Raw)-1], x); return true })
			return n
		case v.IsArray():
			var n int64
			v.ForEach(func(_, x gjson.Result) bool { n += walk(path+"[]", x); return true })
			return n
		}
		out[path] += int64(len(v.Raw))
		return int64(len(v.Raw))
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		v := gjson.ParseBytes(line)
		typ, pt := v.Get("type").String(), v.Get("payload.type").String()
		root := typ
		if (typ == "response_item" || typ == "event_msg") && pt != "" {
			root = pt
		}
		var leaves int64
		v.ForEach(func(k, x gjson.Result) bool {
			if k.String() == "payload" {
				leaves += walk(root, x)
			} else {
				out["(envelope)"] += int64(len(x.Raw))
				leaves += int64(len(x.Raw))
			}
			return true
		})
		out["(keys and punctuation)"] += int64(len(line)) - leaves
	}
	return out
}

// The account's one-pass walk puts every leaf in the class gjson finds for
// it: nested objects and arrays, escaped quotes and keys, spaces between
// tokens, empty containers, and the payload of the generated sessions.
func TestClassesMatchOracle(t *testing.T) {
	hand := strings.Join([]string{
		`{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"019cae0d-0925-731d-974b-0c436012c5be","cwd":"/tmp","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}}}`,
		`{"timestamp":"2026-03-01T10:00:01.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a \"quoted\" \\\\ value\nwith lines"}}`,
		`{ "type" : "response_item" , "timestamp":"2026-03-01T10:00:02.000Z", "payload" : { "type" : "message" , "role":"user", "content" : [ {"type":"input_text","text":"hi"} , {"type":"input_image","image_url":"data:x"} , [] , {} ] } }`,
		`{"type":"event_msg","timestamp":"2026-03-01T10:00:03.000Z","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"c1","stdout":"out","nested":{"a\"b":[1,2.5e3,true,null,{"x":[[]]}]}}}}`,
		`{"type":"turn_context","timestamp":"2026-03-01T10:00:04.000Z","payload":{"cwd":"/tmp","sandbox_policy":{"mode":"workspace-write","writable_roots":["/a","/b"]},"model":"gpt-5"}}`,
	}, "\n") + "\n"
	inputs := map[string][]byte{"hand": []byte(hand)}
	paths, err := bloatgen.Write(t.TempDir(), bloatgen.Options{Turns: 6, CompactEach: 2, Images: 2, ImageBytes: 5000, SubAgents: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs[p] = b
	}
	for name, data := range inputs {
		_, classes := account(t, data, space.Options{Plan: true})
		got := map[string]int64{}
		for _, b := range classes {
			got[b.Name] = b.Bytes
		}
		if diff := cmp.Diff(classOracle(data), got); diff != "" {
			t.Errorf("%s: classes (-gjson +account):\n%s", name, diff)
		}
	}
}

// CutsOnly walks fewer records but plans the same cuts, thread and
// checkpoint figures as the full account.
func TestCutsOnlyPlansTheSame(t *testing.T) {
	paths, err := bloatgen.Write(t.TempDir(), bloatgen.Options{Turns: 10, CompactEach: 3, Images: 4, ImageBytes: 9000, SubAgents: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := account(t, data, space.Options{Plan: true})
		cuts, _ := account(t, data, space.Options{Plan: true, CutsOnly: true})
		if len(full.Cuts) == 0 {
			t.Fatalf("%s: no cuts planned: the test needs some", p)
		}
		if diff := cmp.Diff(full.Cuts, cuts.Cuts); diff != "" {
			t.Errorf("%s: cuts (-full +CutsOnly):\n%s", p, diff)
		}
		if full.ThreadID != cuts.ThreadID || full.ParentThreadID != cuts.ParentThreadID || full.Compactions != cuts.Compactions ||
			full.SupersededCheckpoints != cuts.SupersededCheckpoints || full.DuplicateExecOutput != cuts.DuplicateExecOutput ||
			full.RollbackAfterCheckpoint != cuts.RollbackAfterCheckpoint {
			t.Errorf("%s: CutsOnly %+v, full %+v", p, cuts, full)
		}
	}
}

// A compaction in a glued line (Codex skips the line; repair restores its
// records) is neither a checkpoint nor cut: its cut was planned at the
// offsets of the file's first line.
func TestGluedLineIsNotCut(t *testing.T) {
	rh := `[{"type":"message","role":"user","content":[{"type":"input_text","text":"` + strings.Repeat("x", 200) + `"}]}]`
	comp := `{"timestamp":"2026-03-01T10:00:03.000Z","type":"compacted","payload":{"message":"s","replacement_history":` + rh + `}}`
	user := `{"timestamp":"2026-03-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`
	data := []byte(strings.Join([]string{
		`{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"019cae0d-0925-731d-974b-0c436012c5be","cwd":"/tmp"}}`,
		user, user + comp, comp, user, comp, user,
	}, "\n") + "\n")
	f, _ := account(t, data, space.Options{Plan: true})
	if f.Compactions != 2 {
		t.Fatalf("%d compactions, want 2 (and one glued)", f.Compactions)
	}
	if len(f.Cuts) != 1 || f.Cuts[0].Line != 4 {
		t.Fatalf("cuts %+v, want one, in line 4", f.Cuts)
	}
	c := f.Cuts[0]
	if got := string(data[c.LineOffset+int64(c.Start) : c.LineOffset+int64(c.End)]); got != rh {
		t.Errorf("the cut removes %.80q, want the replacement_history", got)
	}
}
