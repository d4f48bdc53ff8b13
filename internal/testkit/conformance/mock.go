// Package conformance drives the real Codex CLI (installed from npm) against
// a local mock of the Responses API, so that what Codex writes to a rollout
// and what it rebuilds from one on resume can be recorded and compared with
// rollout's engine. See README.md. It is a test harness (internal/testkit):
// used only by tests and by `make conformance` (./internal/gen).
package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// Marker starts every prompt the mock answers from a script: "conformance:
// ACTION,ACTION,...". Each request of the turn plays the next action, the
// step being the number of tool outputs since the prompt. Actions:
//
//	plan     a function call of update_plan
//	shell    a shell call of whichever shell tool the request offers
//	bigshell the same with a command that prints about 14 KB (a large
//	         tool output, for reclaim)
//	reason   a reasoning item, then the next action in the same response
//	big      the next action's response reports a usage large enough to
//	         trigger auto-compaction (with model_auto_compact_token_limit)
//	hold     the next action's response is held open after response.created
//	         until Mock.Release (Held tells when): Codex is mid-turn, with
//	         its writer lock held
//	dynamic  a function call of DynamicToolName, a dynamic tool the client
//	         declared at thread/start (app-server only; 0.171+)
//	slowshell the same with a command that runs for a minute (a call
//	         still running when the turn is interrupted)
//	spawn    a call of spawn_agent whose message is ChildPrompt (a sub-agent
//	         whose requests the mock answers too)
//	wait     a call of wait_agent on the agent the last spawn_agent output
//	         names
//	msg      an assistant message that ends the turn (the default once the
//	         actions run out)
const Marker = "conformance:"

// Request is one request the mock received.
type Request struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
	// Answer says what the mock answered: "plan", "shell", "msg",
	// "summary" (a local compaction), "compaction" (a remote one), "other".
	Answer string `json:"answer"`
}

// Mock is a scripted Responses API. The zero value is not usable: use
// NewMock.
type Mock struct {
	srv *httptest.Server
	mu  sync.Mutex
	req []Request
	n   int // responses sent, for unique ids
	// BigUsage is the total_tokens a "big" step reports.
	BigUsage int64
	big      map[string]bool // prompts whose big step was played
	held     chan struct{}   // receives when a response is held open
	release  chan struct{}   // closed by Release
}

// NewMock starts a mock on the loopback interface.
func NewMock() *Mock {
	m := &Mock{BigUsage: 200_000, big: map[string]bool{}, held: make(chan struct{}, 16), release: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	return m
}

// URL is the base URL to give Codex ("http://127.0.0.1:PORT/v1").
func (m *Mock) URL() string { return m.srv.URL + "/v1" }

// Close releases any held response and stops the server.
func (m *Mock) Close() {
	m.Release()
	m.srv.Close()
}

// Held receives once for each response the mock holds open (a "hold"
// step), after its response.created went out.
func (m *Mock) Held() <-chan struct{} { return m.held }

// Release lets every held response go on; responses held later are held
// until the next Release.
func (m *Mock) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.release)
	m.release = make(chan struct{})
}

// Requests returns the requests received so far.
func (m *Mock) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.req...)
}

// Mark is the number of requests received so far; Since(Mark) returns the
// requests after it.
func (m *Mock) Mark() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.req)
}

// Since returns the requests received after mark.
func (m *Mock) Since(mark int) []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.req[mark:]...)
}

func (m *Mock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Request{Method: r.Method, Path: r.URL.Path}
	if json.Valid(body) {
		rec.Body = body
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		// models lists and the like: nothing to offer.
		rec.Answer = "other"
		m.record(rec)
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	m.mu.Lock()
	m.n++
	n := m.n
	m.mu.Unlock()
	items, usage, answer, hold := m.plan(gjson.ParseBytes(body), n)
	rec.Answer = answer
	m.record(rec)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	respID := fmt.Sprintf("resp_mock%04d", n)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	if hold {
		m.mu.Lock()
		release := m.release
		m.mu.Unlock()
		select {
		case m.held <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
	}
	for i, it := range items {
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID,
		"usage": map[string]any{
			"input_tokens":          usage - 20,
			"input_tokens_details":  map[string]any{"cached_tokens": 0},
			"output_tokens":         20,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens":          usage,
		}}})
}

func (m *Mock) record(r Request) {
	m.mu.Lock()
	m.req = append(m.req, r)
	m.mu.Unlock()
}

func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// plan decides the answer to one request.
func (m *Mock) plan(body gjson.Result, n int) (items []map[string]any, usage int64, answer string, hold bool) {
	usage = 1000
	input := body.Get("input").Array()
	if len(input) > 0 && input[len(input)-1].Get("type").String() == "compaction_trigger" {
		return []map[string]any{{"type": "compaction", "id": apiID("cmp", n),
			"encrypted_content": fmt.Sprintf("COMPACTION-%d", n)}}, usage, "compaction", false
	}
	if len(input) > 0 {
		if last := input[len(input)-1]; last.Get("role").String() == "user" && strings.Contains(messageText(last), "SUMMARY-") {
			// The turn goes on after a compaction: end it.
			return []map[string]any{message(n, fmt.Sprintf("Done %d after compaction.", n))}, usage, "msg", false
		}
	}
	prompt, step := -1, 0
	for i, it := range input {
		if it.Get("type").String() == "message" && it.Get("role").String() == "user" && strings.HasPrefix(messageText(it), Marker) {
			prompt, step = i, 0
		}
		if strings.HasSuffix(it.Get("type").String(), "_output") {
			step++
		}
	}
	if prompt < 0 || lastIsForeignUser(input, prompt) {
		// A request that is not a scripted turn ends in Codex's own
		// prompt: a local compaction (or a summary-like request).
		return []map[string]any{message(n, fmt.Sprintf("SUMMARY-%d of the work so far.", n))}, usage, "summary", false
	}
	actions := strings.Split(strings.TrimSpace(strings.TrimPrefix(messageText(input[prompt]), Marker)), ",")
	// Walk the actions to this step: reason and big modify the next one.
	var pre []map[string]any
	k := 0
	for _, a := range actions {
		a = strings.TrimSpace(a)
		switch a {
		case "reason":
			if k == step {
				pre = append(pre, map[string]any{"type": "reasoning", "id": apiID("rs", n),
					"summary":           []map[string]any{{"type": "summary_text", "text": fmt.Sprintf("Thinking %d.", n)}},
					"encrypted_content": fmt.Sprintf("ENC-%d", n)})
			}
			continue
		case "big":
			// Once per prompt: a turn replayed after its compaction must
			// not compact again.
			key := messageText(input[prompt])
			m.mu.Lock()
			if k == step && !m.big[key] {
				m.big[key] = true
				usage = m.BigUsage
			}
			m.mu.Unlock()
			continue
		case "hold":
			hold = hold || k == step
			continue
		}
		if k == step {
			if it, name := toolCall(body, a, n); it != nil {
				return append(pre, it), usage, name, hold
			}
			return append(pre, message(n, fmt.Sprintf("Done %d.", n))), usage, "msg", hold
		}
		k++
	}
	return append(pre, message(n, fmt.Sprintf("Done %d.", n))), usage, "msg", hold
}

// lastIsForeignUser: the input ends in a user message after the scripted
// prompt that is not a tool output: Codex's compaction prompt.
func lastIsForeignUser(input []gjson.Result, prompt int) bool {
	last := input[len(input)-1]
	return len(input)-1 > prompt && last.Get("type").String() == "message" && last.Get("role").String() == "user" &&
		!strings.Contains(messageText(last), "SUMMARY-") && !isAgentNotification(last)
}

func messageText(it gjson.Result) string {
	var b strings.Builder
	for _, c := range it.Get("content").Array() {
		b.WriteString(c.Get("text").String())
	}
	return b.String()
}

func message(n int, text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "id": apiID("msg", n), "status": "completed",
		"content": []map[string]any{{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// toolCall is a call of the tool action names, among those the request
// offers; nil when it offers none.
func toolCall(body gjson.Result, action string, n int) (map[string]any, string) {
	offered := map[string]string{}
	for _, t := range body.Get("tools").Array() {
		name := t.Get("name").String()
		if name == "" {
			name = t.Get("type").String()
		}
		offered[name] = t.Get("type").String()
	}
	callID := fmt.Sprintf("call_%024x", n)
	if it := agentCall(body, action, callID, n); it != nil {
		return it, action
	}
	fn := func(name string, args any) map[string]any {
		b, _ := json.Marshal(args)
		return map[string]any{"type": "function_call", "id": apiID("fc", n), "call_id": callID,
			"name": name, "arguments": string(b), "status": "completed"}
	}
	switch action {
	case "dynamic":
		if call := dynamicToolCall(offered, callID, n); call != nil {
			return call, "dynamic"
		}
		return nil, ""
	case "plan":
		if _, ok := offered["update_plan"]; ok {
			return fn("update_plan", map[string]any{"explanation": "conformance", "plan": []map[string]string{
				{"step": "look", "status": "completed"}, {"step": "answer", "status": "in_progress"}}}), "plan"
		}
		// Newer versions offer no update_plan to an unknown model: a
		// shell call stands in.
		fallthrough
	case "shell", "bigshell", "slowshell":
		cmd := "echo conformance"
		switch action {
		case "bigshell":
			cmd = "seq 1 3000"
		case "slowshell":
			cmd = "sleep " + slowShellSeconds
		}
		answer := "shell"
		if action == "slowshell" {
			answer = action // what Interrupt waits for
		}
		switch {
		case offered["exec_command"] != "":
			return fn("exec_command", map[string]any{"cmd": cmd}), answer
		case offered["shell_command"] != "":
			return fn("shell_command", map[string]any{"command": cmd}), answer
		case offered["shell"] != "":
			return fn("shell", map[string]any{"command": []string{"bash", "-lc", cmd}}), answer
		case offered["local_shell"] != "":
			return map[string]any{"type": "local_shell_call", "id": apiID("lsh", n), "call_id": callID, "status": "completed",
				"action": map[string]any{"type": "exec", "command": []string{"bash", "-lc", cmd}}}, answer
		}
	}
	return nil, ""
}

// apiID is an id shaped like the Responses API's (prefix, 48 hex digits),
// unique per response.
func apiID(prefix string, n int) string { return fmt.Sprintf("%s_%048x", prefix, 0xc0de0000+n) }

// DynamicToolName is the dynamic tool the "dynamic" action calls: the
// scenarios declare it at thread/start (DynamicToolSpec).
const DynamicToolName = "conformance_lookup"

// DynamicToolSpec is the dynamicTools entry of thread/start that declares
// DynamicToolName (app-server's FunctionDynamicToolSpec).
func DynamicToolSpec() map[string]any {
	return map[string]any{"type": "function", "name": DynamicToolName, "description": "Looks a word up for the conformance harness.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}
}

// dynamicToolCall is a function call of DynamicToolName when the request
// offers it, nil otherwise.
func dynamicToolCall(offered map[string]string, callID string, n int) map[string]any {
	if offered[DynamicToolName] == "" {
		return nil
	}
	return map[string]any{"type": "function_call", "id": apiID("fc", n), "call_id": callID,
		"name": DynamicToolName, "arguments": `{"q":"conformance"}`, "status": "completed"}
}
