package gen

import (
	"encoding/base64"
	"time"

	"github.com/rollout-dev/rollout/rollout"
)

// The lines of one turn: its context, the user and assistant messages,
// reasoning, and tool calls with their outputs.

func (g *generator) turn() {
	first := g.st.Turns == 0
	g.st.Turns++
	if first {
		g.tick(3000, 15000)
	} else {
		g.tick(5000, 900000)
	}
	g.turnID = g.uuidString()

	g.begin("event_msg")
	l := append(g.line, `{"type":"task_started","turn_id":"`...)
	l = append(l, g.turnID...)
	l = append(l, `","model_context_window":`...)
	l = appendInt(l, g.window)
	g.line = append(l, `,"collaboration_mode_kind":"default"}`...)
	g.end()

	g.tick(1, 20)
	g.turnContext()

	if first {
		g.tick(1, 10)
		g.tmp = append(g.tmp[:0], "<environment_context>\n  <cwd>/home/dev/proj</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>zsh</shell>\n</environment_context>"...)
		g.userMessage(g.tmp, 0, false)
		g.afterItem(0)
	}

	g.tick(1, 30)
	g.tmp = append(g.tmp[:0], pick(g.r, prompts)...)
	imgSize := 0
	switch {
	case g.forceBigImage:
		g.forceBigImage = false
		imgSize = g.o.MaxLineBytes*6/10 + g.r.IntN(g.o.MaxLineBytes*35/100)
	case g.r.IntN(100) < 4:
		lo := min(200_000, g.o.MaxLineBytes/4)
		imgSize = lo + g.r.IntN(g.o.MaxLineBytes-lo-8192)
	case g.r.IntN(8) == 0:
		// a pasted log
		g.tmp = append(g.tmp, "\n\n```\n"...)
		g.tmp = appendLogText(g.tmp, g.r, g.r.IntN(numFlavors), g.fit(1000+g.r.IntN(40000), 200, g.userCopies()))
		g.tmp = append(g.tmp, "\n```"...)
	}
	if imgSize > 0 && g.fit(imgSize, 0, 2) < imgSize {
		// No room for a whole image (in the message and its event): one as
		// large as the room left, or none.
		if imgSize = g.fit(imgSize, 0, 2); imgSize < 4096 {
			imgSize = 0
		}
	}
	g.userMessage(g.tmp, imgSize, true)
	g.afterItem(0.3)
	g.tick(1, 5)
	g.userMessageEvent(g.tmp, imgSize > 0)
	if g.o.Paginated {
		g.tick(1, 2)
		g.itemCompleted(g.tmp)
	}

	steps := 1 + g.r.IntN(4)
	if g.r.IntN(3) == 0 {
		steps += g.r.IntN(12)
	}
	for s := 0; s < steps && g.err == nil; s++ {
		last := s == steps-1 || (g.o.Fit && g.size() >= g.o.TargetBytes)
		if g.fill+g.pending > g.window*8/10 {
			g.compact()
		}
		g.tick(800, 20000)
		rt := g.reasoning()
		out := rt
		if last {
			g.tick(200, 5000)
			msgLen := 80 + g.r.IntN(1500)
			if g.r.IntN(6) == 0 {
				msgLen += g.r.IntN(8000)
			}
			g.tmp = appendProse(g.tmp[:0], g.r, g.fit(msgLen, 80, 3))
			out += g.assistantMessage(g.tmp, "final_answer")
			g.afterItem(0.05)
			g.tick(1, 5)
			g.agentMessageEvent(g.tmp, "final_answer")
			g.tick(10, 200)
			g.request(out, rt)
			g.tick(1, 20)
			g.begin("event_msg")
			l := append(g.line, `{"type":"task_complete","turn_id":"`...)
			l = append(l, g.turnID...)
			l = append(l, `","last_agent_message":`...)
			g.line = rollout.AppendJSONString(l, g.tmp)
			g.line = append(g.line, '}')
			g.end()
			break
		}
		if g.r.IntN(5) == 0 {
			g.tick(100, 3000)
			g.tmp = appendProse(g.tmp[:0], g.r, 60+g.r.IntN(300))
			out += g.assistantMessage(g.tmp, "commentary")
			g.afterItem(0.05)
			g.tick(1, 5)
			g.agentMessageEvent(g.tmp, "commentary")
		}
		ncalls := 1
		if x := g.r.IntN(10); x >= 9 {
			ncalls = 3
		} else if x >= 7 {
			ncalls = 2
		}
		calls := make([]pendingCall, 0, ncalls)
		for c := 0; c < ncalls; c++ {
			g.tick(5, 800)
			pc, tok := g.toolCall()
			out += tok
			calls = append(calls, pc)
			g.afterItem(0.02)
		}
		g.tick(10, 300)
		g.request(out, rt)
		for _, pc := range calls {
			g.tick(100, 60000)
			g.pending += g.toolOutput(pc)
			g.afterItem(0.15)
		}
	}
}

func (g *generator) turnContext() {
	g.begin("turn_context")
	l := append(g.line, `{"turn_id":"`...)
	l = append(l, g.turnID...)
	l = append(l, `","cwd":`...)
	l = rollout.AppendJSONString(l, cwds[g.ws.cwd])
	l = append(l, `,"current_date":"`...)
	l = time.UnixMilli(g.ms).UTC().AppendFormat(l, "2006-01-02")
	l = append(l, `","timezone":"Europe/Berlin","approval_policy":"on-request","sandbox_policy":{"type":"`...)
	l = append(l, g.ws.sandbox...)
	l = append(l, `","writable_roots":[],"network_access":`...)
	l = appendBool(l, g.ws.network)
	l = append(l, `,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false},"model":"gpt-5.3-codex","realtime_active":false,"effort":"`...)
	l = append(l, [...]string{"low", "medium", "medium", "high"}[g.r.IntN(4)]...)
	g.line = append(l, `","summary":"auto"}`...)
	g.end()
}

// userMessage writes a user message item; imgSize > 0 adds an inline PNG
// whose data URL is about that long. remember: keep it as a candidate for
// replacement_history.
func (g *generator) userMessage(text []byte, imgSize int, remember bool) {
	g.begin("response_item")
	l := g.appendID(append(g.line, `{"type":"message","id":"`...), "msg")
	l = append(l, `","role":"user","content":[{"type":"input_text","text":`...)
	l = rollout.AppendJSONString(l, text)
	l = append(l, '}')
	tokens := tokensOf(len(text))
	if imgSize > 0 {
		g.img = append(g.img[:0], "data:image/png;base64,"...)
		g.img = appendRandomBase64(g.img, g.r, base64.StdEncoding, pngHeader, imgSize, &g.tmp2)
		if len(g.img) >= 2_000_000 {
			g.bigImageSeen = true
		}
		l = append(l, `,{"type":"input_image","image_url":"`...)
		l = append(l, g.img...)
		l = append(l, `"}`...)
		tokens += 85 + 170*int64(1+g.r.IntN(8))
		g.st.Images++
	}
	l = append(l, ']')
	if g.o.Paginated {
		l = append(l, `,"internal_chat_message_metadata_passthrough":{"turn_id":"`...)
		l = append(l, g.turnID...)
		l = append(l, `"}`...)
	}
	l = append(l, '}')
	if remember && imgSize == 0 && len(l)-g.payload <= 8192 {
		p := append([]byte(nil), l[g.payload:]...)
		g.recentUsers = append(g.recentUsers, histItem{p, tokens})
		if len(g.recentUsers) > 4 {
			g.recentUsers = g.recentUsers[1:]
		}
	}
	if g.o.Paginated {
		g.userOrder++
		l = append(l, `,"metadata":{"client_authored":false,"user_input_order":`...)
		l = appendInt(l, int64(g.userOrder))
		l = append(l, '}')
	}
	g.line = l
	g.st.ResponseItems++
	g.pending += tokens
	g.end()
}

func (g *generator) userMessageEvent(text []byte, withImage bool) {
	g.begin("event_msg")
	l := append(g.line, `{"type":"user_message","message":`...)
	l = rollout.AppendJSONString(l, text)
	if withImage {
		l = append(l, `,"images":["`...)
		l = append(l, g.img...)
		l = append(l, `"]`...)
	} else {
		l = append(l, `,"images":null`...)
	}
	g.line = append(l, `,"local_images":[],"text_elements":[]}`...)
	g.end()
}

func (g *generator) itemCompleted(text []byte) {
	g.begin("event_msg")
	l := append(g.line, `{"type":"item_completed","thread_id":"`...)
	l = append(l, g.threadID...)
	l = append(l, `","turn_id":"`...)
	l = append(l, g.turnID...)
	l = append(l, `","item":{"type":"UserMessage","id":"`...)
	l = appendUUID(l, g.uuid())
	l = append(l, `","content":[{"type":"text","text":`...)
	l = rollout.AppendJSONString(l, text)
	l = append(l, `,"text_elements":[]}]},"started_at_ms":`...)
	l = appendInt(l, g.ms)
	l = append(l, `,"completed_at_ms":`...)
	l = appendInt(l, g.ms)
	g.line = append(l, '}')
	g.end()
}

// reasoning writes a reasoning item (and its world_state, if any) and
// returns its reasoning tokens.
func (g *generator) reasoning() int64 {
	g.begin("response_item")
	sum := pick(g.r, summaries)
	l := g.appendID(append(g.line, `{"type":"reasoning","id":"`...), "rs")
	l = append(l, `","summary":[{"type":"summary_text","text":`...)
	l = rollout.AppendJSONString(l, sum)
	l = append(l, `}],"content":null,"encrypted_content":"`...)
	n := 600 + g.r.IntN(6000)
	if g.r.IntN(10) == 0 {
		n += g.r.IntN(40000)
	}
	n = g.fit(n, 600, 1)
	l = appendRandomBase64(l, g.r, base64.URLEncoding, fernetPrefix, n, &g.tmp2)
	g.line = append(l, `"}`...)
	g.st.ResponseItems++
	g.end()
	g.afterItem(0.05)
	if g.r.IntN(3) == 0 {
		g.tick(1, 2)
		g.begin("event_msg")
		l := append(g.line, `{"type":"agent_reasoning","text":`...)
		g.line = append(rollout.AppendJSONString(l, sum), '}')
		g.end()
	}
	return int64(n/3) + 20
}

func (g *generator) assistantMessage(text []byte, phase string) int64 {
	g.begin("response_item")
	l := g.appendID(append(g.line, `{"type":"message","id":"`...), "msg")
	l = append(l, `","role":"assistant","content":[{"type":"output_text","text":`...)
	l = rollout.AppendJSONString(l, text)
	l = append(l, `}],"phase":"`...)
	l = append(l, phase...)
	l = append(l, '"')
	if g.o.Paginated {
		l = append(l, `,"internal_chat_message_metadata_passthrough":{"turn_id":"`...)
		l = append(l, g.turnID...)
		l = append(l, `"}`...)
	}
	g.line = append(l, '}')
	g.st.ResponseItems++
	g.end()
	return tokensOf(len(text))
}

func (g *generator) agentMessageEvent(text []byte, phase string) {
	g.begin("event_msg")
	l := append(g.line, `{"type":"agent_message","message":`...)
	l = rollout.AppendJSONString(l, text)
	l = append(l, `,"phase":"`...)
	l = append(l, phase...)
	g.line = append(l, `"}`...)
	g.end()
}

type command struct {
	cmd    string
	flavor int
}

var commands = []command{
	{"go test ./...", flavorGoTest},
	{"go test -race -count=1 ./internal/...", flavorGoTest},
	{"cargo build --release", flavorCargo},
	{"npm run build", flavorNode},
	{"npx jest --ci", flavorNode},
	{"cmake --build build -j8", flavorCMake},
	{"sed -n '1,240p' internal/reader/reader.go", flavorSource},
	{"cat internal/engine/engine.go", flavorSource},
	{`rg -n "ReadSlice|bufio.Scanner" --type go`, flavorGrep},
	{"git diff HEAD~3", flavorDiff},
	{"git log -p -5 -- internal/", flavorDiff},
}

// toolCall writes a function_call or custom_tool_call and returns it with
// its output tokens.
func (g *generator) toolCall() (pendingCall, int64) {
	g.st.ToolCalls++
	g.st.ResponseItems++
	pc := pendingCall{callID: g.callID()}
	g.begin("response_item")
	if g.r.IntN(100) < 15 {
		pc.custom = true
		pc.path = pick(g.r, goPkgs) + "/" + pick(g.r, fileStems) + ".go"
		t := append(g.tmp[:0], "*** Begin Patch\n*** Update File: "...)
		t = append(t, pc.path...)
		t = append(t, "\n@@\n"...)
		t = appendLogText(t, g.r, flavorDiff, 200+g.r.IntN(4000))
		t = append(t, "*** End Patch\n"...)
		g.tmp = t
		l := g.appendID(append(g.line, `{"type":"custom_tool_call","id":"`...), "ctc")
		l = append(l, `","status":"completed","call_id":"`...)
		l = append(l, pc.callID...)
		l = append(l, `","name":"apply_patch","input":`...)
		l = rollout.AppendJSONString(l, t)
		g.line = append(l, '}')
		g.end()
		return pc, tokensOf(len(t))
	}
	c := commands[g.r.IntN(len(commands))]
	pc.flavor = c.flavor
	a := append(g.tmp2[:0], `{"command":`...)
	a = rollout.AppendJSONString(a, c.cmd)
	a = append(a, `,"workdir":`...)
	a = rollout.AppendJSONString(a, cwds[g.ws.cwd])
	a = append(a, `,"timeout_ms":`...)
	a = appendInt(a, int64(10000*(1+g.r.IntN(30))))
	a = append(a, '}')
	g.tmp2 = a
	l := g.appendID(append(g.line, `{"type":"function_call","id":"`...), "fc")
	l = append(l, `","name":"shell_command","arguments":`...)
	l = rollout.AppendJSONString(l, a)
	l = append(l, `,"call_id":"`...)
	l = append(l, pc.callID...)
	g.line = append(l, `"}`...)
	g.end()
	return pc, tokensOf(len(a))
}

// toolOutput writes the output of pc and returns the tokens it adds to the
// context (Codex truncates what the model sees to ~10k tokens).
func (g *generator) toolOutput(pc pendingCall) int64 {
	g.st.ResponseItems++
	g.begin("response_item")
	if pc.custom {
		l := g.appendID(append(g.line, `{"type":"custom_tool_call_output","id":"`...), "ctco")
		l = append(l, `","call_id":"`...)
		l = append(l, pc.callID...)
		l = append(l, `","output":`...)
		t := append(g.tmp[:0], "Success. Updated the following files:\nM "...)
		t = append(t, pc.path...)
		t = append(t, '\n')
		g.tmp = t
		g.line = append(rollout.AppendJSONString(l, t), '}')
		g.end()
		return tokensOf(len(t))
	}
	var n int
	switch x := g.r.IntN(1000); {
	case g.forceBigOutput:
		g.forceBigOutput = false
		n = g.o.MaxLineBytes * 95 / 100
	case x < 700:
		n = 60 + g.r.IntN(4000)
	case x < 920:
		n = 4000 + g.r.IntN(60000)
	case x < 985:
		n = 64000 + g.r.IntN(1_000_000)
	default:
		n = 1_000_000 + g.r.IntN(g.o.MaxLineBytes)
	}
	n = g.fit(n, 60, 1)
	exit := 0
	if g.r.IntN(6) == 0 {
		exit = 1
	}
	t := append(g.tmp[:0], "Exit code: "...)
	t = appendInt(t, int64(exit))
	t = append(t, "\nWall time: "...)
	t = appendSecs(t, g.r)
	t = append(t[:len(t)-1], " seconds\nOutput:\n"...)
	t = appendLogText(t, g.r, pc.flavor, n)
	g.tmp = t
	l := g.appendID(append(g.line, `{"type":"function_call_output","id":"`...), "fco")
	l = append(l, `","call_id":"`...)
	l = append(l, pc.callID...)
	l = append(l, `","output":`...)
	g.line = l
	l = appendStringMax(l, t, g.room(), "\n[... output truncated ...]")
	g.line = append(l, '}')
	g.end()
	return min(tokensOf(len(t)), 10000)
}
