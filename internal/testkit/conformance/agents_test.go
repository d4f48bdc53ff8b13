package conformance

import (
	"strings"
	"testing"
)

// TestMockAgents: spawn and wait find the agent tools at the top level
// (0.104-0.125), in a namespace (0.139 on) or, for wait, under its
// 0.104-0.107 name; without them the actions end the turn; the sub-agent's ending
// notification does not turn the parent's request into a compaction.
func TestMockAgents(t *testing.T) {
	fn := func(name string) map[string]any { return map[string]any{"type": "function", "name": name} }
	shell := fn("exec_command")
	cases := []struct {
		name   string
		tools  []any
		wantNS string // "" for a top-level call
		wait   string // the wait tool's name; "" when none is offered
	}{
		{"top level", []any{shell, fn("spawn_agent"), fn("wait_agent")}, "", "wait_agent"},
		{"0.104 wait", []any{shell, fn("spawn_agent"), fn("wait")}, "", "wait"},
		{"namespace", []any{shell, map[string]any{"type": "namespace", "name": "multi_agent_v1",
			"tools": []any{fn("spawn_agent"), fn("wait_agent")}}}, "multi_agent_v1", "wait_agent"},
		{"none", []any{shell}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewMock()
			defer m.Close()
			prompt := user(Marker + " spawn,wait,msg")
			items, _ := post(t, m, map[string]any{"input": []any{prompt}, "tools": c.tools})
			if len(items) != 1 {
				t.Fatalf("step 0: %v", items)
			}
			if c.wait == "" {
				if items[0].Get("type").String() != "message" {
					t.Fatalf("no agent tools offered: %v, want the message", items[0])
				}
				return
			}
			spawn := items[0]
			if spawn.Get("name").String() != "spawn_agent" || spawn.Get("namespace").String() != c.wantNS ||
				spawn.Get("arguments").String() != `{"message":"`+ChildPrompt+`"}` {
				t.Fatalf("step 0: %v, want spawn_agent in namespace %q", spawn, c.wantNS)
			}
			out := map[string]any{"type": "function_call_output", "call_id": spawn.Get("call_id").String(),
				"output": `{"agent_id":"agent-7","nickname":"Locke"}`}
			call := map[string]any{"type": "function_call", "call_id": spawn.Get("call_id").String(), "name": "spawn_agent"}
			items, _ = post(t, m, map[string]any{"input": []any{prompt, call, out}, "tools": c.tools})
			args := map[string]string{"wait_agent": `{"targets":["agent-7"],"timeout_ms":30000}`, "wait": `{"ids":["agent-7"],"timeout_ms":30000}`}
			if len(items) != 1 || items[0].Get("name").String() != c.wait || items[0].Get("arguments").String() != args[c.wait] {
				t.Fatalf("step 1: %v, want %s on agent-7", items, c.wait)
			}
			waitOut := map[string]any{"type": "function_call_output", "call_id": items[0].Get("call_id").String(), "output": "{}"}
			note := user("<subagent_notification>\n{\"agent_path\":\"agent-7\",\"status\":{\"completed\":\"Done.\"}}\n</subagent_notification>")
			items, _ = post(t, m, map[string]any{"input": []any{prompt, call, out, waitOut, note}, "tools": c.tools})
			if len(items) != 1 || items[0].Get("role").String() != "assistant" || items[0].Get("content.0.text").String() == "" ||
				m.Requests()[2].Answer != "msg" {
				t.Fatalf("after the notification: %v (answer %q), want the turn's message", items, m.Requests()[2].Answer)
			}
			// The sub-agent's own request: its script's shell call.
			items, _ = post(t, m, map[string]any{"input": []any{user(ChildPrompt)}, "tools": c.tools})
			if len(items) != 1 || items[0].Get("name").String() != "exec_command" {
				t.Fatalf("child: %v, want its shell call", items)
			}
		})
	}
}

// TestMockSlowShell: slowshell is a shell call of a long command, answered
// as "slowshell" (what Home.Interrupt waits for).
func TestMockSlowShell(t *testing.T) {
	m := NewMock()
	defer m.Close()
	items, _ := post(t, m, map[string]any{"input": []any{user(Marker + " slowshell,msg")},
		"tools": []map[string]string{{"type": "function", "name": "exec_command"}}})
	if len(items) != 1 || items[0].Get("arguments").String() != `{"cmd":"sleep `+slowShellSeconds+`"}` || m.Requests()[0].Answer != "slowshell" {
		t.Fatalf("%v (answer %q)", items, m.Requests()[0].Answer)
	}
}

// TestLastTurnID: the turn id of the last task_started, past a line
// longer than the read buffer; an error when the session has no rollout
// or no turn.
func TestLastTurnID(t *testing.T) {
	h := &Home{Dir: t.TempDir()}
	id := "01a2365a-0000-7000-8000-000000000001"
	rel := "sessions/2026/12/02/rollout-2026-12-02T10-00-00-" + id + ".jsonl"
	if _, err := lastTurnID(h, id); err == nil {
		t.Error("no rollout: no error")
	}
	lines := `{"type":"session_meta","payload":{"id":"` + id + `"}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"task_started","turn_id":"turn-1"}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"task_started","turn_id":"turn-2"}}` + "\n" +
		`{"type":"response_item","payload":{"type":"message","text":"` + strings.Repeat("x", 3<<20) + `"}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"task_complete","turn_id":"turn-2"}}` + "\n"
	if err := h.Place(map[string][]byte{rel: []byte(lines)}); err != nil {
		t.Fatal(err)
	}
	if got, err := lastTurnID(h, id); err != nil || got != "turn-2" {
		t.Errorf("lastTurnID = %q, %v; want turn-2", got, err)
	}
	if err := h.Place(map[string][]byte{rel: []byte(`{"type":"session_meta","payload":{"id":"` + id + `"}}` + "\n")}); err != nil {
		t.Fatal(err)
	}
	if got, err := lastTurnID(h, id); err == nil {
		t.Errorf("no turn: %q, want an error", got)
	}
}
