package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// post sends one Responses request to the mock and returns the items it
// streamed and the usage it reported.
func post(t *testing.T, m *Mock, body map[string]any) (items []gjson.Result, total int64) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(m.URL()+"/responses", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var events []string
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		ev := gjson.Parse(data)
		events = append(events, ev.Get("type").String())
		switch ev.Get("type").String() {
		case "response.output_item.done":
			items = append(items, ev.Get("item"))
		case "response.completed":
			total = ev.Get("response.usage.total_tokens").Int()
		}
	}
	if len(events) < 2 || events[0] != "response.created" || events[len(events)-1] != "response.completed" {
		t.Fatalf("events %v: want response.created first and response.completed last", events)
	}
	return items, total
}

func user(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": text}}}
}

func TestMockScript(t *testing.T) {
	m := NewMock()
	defer m.Close()
	tools := []map[string]string{{"type": "function", "name": "shell"}, {"type": "function", "name": "update_plan"}}
	prompt := user(Marker + " reason,plan,big,shell,msg")
	// Step 0: reasoning, then the update_plan call, in one response.
	items, total := post(t, m, map[string]any{"input": []any{prompt}, "tools": tools})
	if len(items) != 2 || items[0].Get("type").String() != "reasoning" || items[1].Get("name").String() != "update_plan" || total != 1000 {
		t.Fatalf("step 0: %v (usage %d)", items, total)
	}
	call := items[1].Get("call_id").String()
	out := map[string]any{"type": "function_call_output", "call_id": call, "output": "ok"}
	// Step 1: one output since the prompt: the shell call, with big usage.
	items, total = post(t, m, map[string]any{"input": []any{prompt, out}, "tools": tools})
	if len(items) != 1 || items[0].Get("name").String() != "shell" || total != m.BigUsage {
		t.Fatalf("step 1: %v (usage %d)", items, total)
	}
	// The same step again (a turn replayed after its compaction): no
	// second big usage.
	if _, total = post(t, m, map[string]any{"input": []any{prompt, out}, "tools": tools}); total == m.BigUsage {
		t.Error("big usage reported twice for one prompt")
	}
	// Step 2: the message that ends the turn.
	items, _ = post(t, m, map[string]any{"input": []any{prompt, out, out}, "tools": tools})
	if len(items) != 1 || items[0].Get("role").String() != "assistant" {
		t.Fatalf("step 2: %v", items)
	}
	// Codex's compaction prompt after the scripted one: a summary.
	items, _ = post(t, m, map[string]any{"input": []any{prompt, user("Summarize the conversation.")}})
	if len(items) != 1 || !strings.HasPrefix(messageText(items[0]), "SUMMARY-") {
		t.Fatalf("local compaction: %v", items)
	}
	// Remote compaction: exactly one compaction item.
	items, _ = post(t, m, map[string]any{"input": []any{prompt, map[string]string{"type": "compaction_trigger"}}})
	if len(items) != 1 || items[0].Get("type").String() != "compaction" {
		t.Fatalf("remote compaction: %v", items)
	}
	// A shell call of whichever shell tool is offered.
	for tool, args := range map[string]string{"exec_command": "cmd", "shell_command": "command"} {
		items, _ = post(t, m, map[string]any{"input": []any{user(Marker + " shell")}, "tools": []map[string]string{{"type": "function", "name": tool}}})
		if len(items) != 1 || items[0].Get("name").String() != tool || !gjson.Get(items[0].Get("arguments").String(), args).Exists() {
			t.Errorf("%s: %v", tool, items)
		}
	}
	if got := len(m.Requests()); got != 8 {
		t.Errorf("%d requests recorded, want 8", got)
	}
}

// TestItemOf: the same item read from a rollout and from a request body
// (ids, status and metadata added or stripped) has one key; another text
// has another.
func TestItemOf(t *testing.T) {
	stored := ItemOf([]byte(`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}],"internal_chat_message_metadata_passthrough":{}}`))
	sent := ItemOf([]byte(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}`))
	other := ItemOf([]byte(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ho"}]}`))
	if stored.Key() != sent.Key() || stored.Key() == other.Key() {
		t.Errorf("keys %q %q %q", stored.Key(), sent.Key(), other.Key())
	}
	if d := Diff([]Item{stored}, []Item{sent}); d != "" {
		t.Errorf("Diff of equal items: %s", d)
	}
	if d := Diff([]Item{stored}, []Item{other}); !strings.Contains(d, "only Codex") {
		t.Errorf("Diff of different items: %q", d)
	}
}

// TestCorruptionsApply: each corruption changes the committed rollouts it
// applies to, and nothing but the line it names (or the lines after a
// removed one; an appended line is the one after the last).
func TestCorruptionsApply(t *testing.T) {
	for _, c := range Corruptions {
		applied := 0
		for _, v := range Versions {
			_, damaged, line, base, err := Damage("testdata", v, c)
			if err != nil {
				t.Fatal(err)
			}
			if damaged == nil {
				continue
			}
			applied++
			orig, err := os.ReadFile(filepath.Join("testdata", v, c.Base, "session", base.Judged))
			if err != nil {
				t.Fatal(err)
			}
			ol, dl := lines(orig), lines(damaged)
			if bytes.Equal(orig, damaged) || line < 1 || line > len(ol)+1 {
				t.Errorf("%s %s: line %d, changed %v", v, c.Name, line, !bytes.Equal(orig, damaged))
				continue
			}
			for i := 0; i < line-1; i++ {
				if !bytes.Equal(ol[i], dl[i]) {
					t.Errorf("%s %s: line %d changed, want only line %d", v, c.Name, i+1, line)
					break
				}
			}
		}
		if applied == 0 {
			t.Errorf("%s applies to no golden", c.Name)
		}
	}
}

// TestMockHold: a "hold" step's response starts (response.created) and
// waits for Release; Held tells when it waits. bigshell prints a large
// output.
func TestMockHold(t *testing.T) {
	m := NewMock()
	defer m.Close()
	tools := []map[string]string{{"type": "function", "name": "shell"}}
	done := make(chan []gjson.Result, 1)
	go func() {
		items, _ := post(t, m, map[string]any{"input": []any{user(Marker + " hold,bigshell,msg")}, "tools": tools})
		done <- items
	}()
	select {
	case <-m.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("the mock did not hold the response")
	}
	select {
	case <-done:
		t.Fatal("a held response completed before Release")
	case <-time.After(200 * time.Millisecond):
	}
	m.Release()
	var items []gjson.Result
	select {
	case items = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the response stayed held after Release")
	}
	if len(items) != 1 || items[0].Get("name").String() != "shell" || !strings.Contains(items[0].Get("arguments").String(), "seq 1 3000") {
		t.Fatalf("held step: %v, want the bigshell call", items)
	}
	// The next step is not held.
	items, _ = post(t, m, map[string]any{"input": []any{user(Marker + " hold,bigshell,msg"),
		map[string]any{"type": "function_call_output", "call_id": "c", "output": "1"}}, "tools": tools})
	if len(items) != 1 || items[0].Get("type").String() != "message" {
		t.Fatalf("step 1: %v", items)
	}
}
