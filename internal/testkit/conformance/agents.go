package conformance

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// ChildPrompt is the task a "spawn" action gives the sub-agent: a script
// of its own, so the mock answers the child's requests as well.
const ChildPrompt = Marker + " shell,msg"

// slowShellSeconds is how long a "slowshell" command runs: longer than
// any step waits before interrupting it.
const slowShellSeconds = "60"

// agentCall is the call of a multi-agent tool for action "spawn" or
// "wait", nil for another action or when the request offers no such
// tool (then the action plays as a message). The tool is found at the
// top level (0.104.0 to 0.125.0) or inside a namespace (0.139.0 and later
// offer spawn_agent and wait_agent in multi_agent_v1); a namespaced call
// names its namespace.
func agentCall(body gjson.Result, action, callID string, n int) map[string]any {
	var name string
	var args map[string]any
	switch action {
	case "spawn":
		name, args = "spawn_agent", map[string]any{"message": ChildPrompt}
	case "wait":
		id := spawnedAgent(body.Get("input").Array())
		if id == "" {
			return nil
		}
		name, args = "wait_agent", map[string]any{"targets": []string{id}, "timeout_ms": 30000}
	default:
		return nil
	}
	ns, ok := offeredIn(body, name)
	if !ok && action == "wait" {
		// 0.104.0 to 0.107.0 name it wait, with ids.
		name, args["ids"] = "wait", args["targets"]
		delete(args, "targets")
		ns, ok = offeredIn(body, name)
	}
	if !ok {
		return nil
	}
	b, _ := json.Marshal(args)
	it := map[string]any{"type": "function_call", "id": apiID("fc", n), "call_id": callID,
		"name": name, "arguments": string(b), "status": "completed"}
	if ns != "" {
		it["namespace"] = ns
	}
	return it
}

// offeredIn reports whether the request offers tool name, and the
// namespace that holds it ("" at the top level).
func offeredIn(body gjson.Result, name string) (string, bool) {
	for _, t := range body.Get("tools").Array() {
		if t.Get("name").String() == name && t.Get("type").String() != "namespace" {
			return "", true
		}
		if t.Get("type").String() != "namespace" {
			continue
		}
		for _, c := range t.Get("tools").Array() {
			if c.Get("name").String() == name {
				return t.Get("name").String(), true
			}
		}
	}
	return "", false
}

// spawnedAgent is the agent id the output of the last spawn_agent call
// of the input names, "" when there is none.
func spawnedAgent(input []gjson.Result) string {
	spawns := map[string]bool{}
	id := ""
	for _, it := range input {
		switch it.Get("type").String() {
		case "function_call":
			if it.Get("name").String() == "spawn_agent" {
				spawns[it.Get("call_id").String()] = true
			}
		case "function_call_output":
			if !spawns[it.Get("call_id").String()] {
				continue
			}
			out := it.Get("output")
			if out.IsArray() { // content items
				out = out.Get("0.text")
			}
			for _, k := range []string{"agent_id", "id", "agent_path", "task_name"} {
				if v := gjson.Get(out.String(), k).String(); v != "" {
					id = v
					break
				}
			}
		}
	}
	return id
}

// isAgentNotification: a user message Codex adds to the parent's history
// when a sub-agent ends (<subagent_notification>), part of the scripted
// turn, not a prompt of Codex's own.
func isAgentNotification(it gjson.Result) bool {
	return strings.HasPrefix(strings.TrimSpace(messageText(it)), "<subagent_notification>")
}
