package reconstruct

import (
	"github.com/rollout-dev/rollout/rollout"
	"github.com/tidwall/gjson"
)

type usage struct {
	input, cached, cacheWrite, output, reasoning, total int64
}

func readUsage(u gjson.Result) usage {
	var x usage
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			x.input = v.Int()
		case "cached_input_tokens":
			x.cached = v.Int()
		case "cache_write_input_tokens":
			x.cacheWrite = v.Int()
		case "output_tokens":
			x.output = v.Int()
		case "reasoning_output_tokens":
			x.reasoning = v.Int()
		case "total_tokens":
			x.total = v.Int()
		}
		return true
	})
	return x
}

func (e *engine) tokenCount(rec *rollout.Record, pos Pos, info gjson.Result) {
	if !info.IsObject() {
		return
	}
	total := readUsage(info.Get("total_token_usage"))
	if e.lastTotal != nil && *e.lastTotal == total {
		e.reemitted++
		if e.reemitted == 1 {
			e.firstReemitted = pos // reported at the end, with the count
		}
		if e.st.Tokens != nil {
			// Copied, not changed in place: turn checkpoints share it.
			t := *e.st.Tokens
			t.ReemittedSeen++
			e.st.Tokens = &t
		}
		return
	}
	if e.lastTotal != nil && !e.skipDecrease && !e.threadCounter && total.total < e.lastTotal.total {
		e.emit(pos, TokensTotalDecreasedEvidence{Previous: e.lastTotal.total, Got: total.total, Counter: "total_token_usage"})
	}
	last := info.Get("last_token_usage")
	lu := readUsage(last)
	fill := lu.total
	if !last.Get("total_tokens").Exists() {
		fill = lu.input + lu.output
	}
	window := info.Get("model_context_window").Int()
	if window > 0 && fill > window {
		e.emit(pos, TokensOverWindowEvidence{Fill: fill, Window: window})
	}
	ts, _ := rollout.StringValue(rec.Timestamp())
	e.emit(pos, FlowTokenCountEvidence{Fill: fill, Window: window,
		Input: lu.input, Cached: lu.cached, Output: lu.output, Total: total.total,
		Timestamp: string(ts)})
	t := total
	e.lastTotal = &t
	e.skipDecrease, e.skipThreadDecrease = false, false
	seen := 1
	if e.st.Tokens != nil {
		seen = e.st.Tokens.RequestsSeen + 1
	}
	e.st.Tokens = &TokenInfo{Line: pos.Line, Fill: fill, Window: window, TotalTokens: total.total,
		InputTokens: total.input, CachedInput: total.cached, OutputTokens: total.output,
		ReasoningOut: total.reasoning, RequestsSeen: seen}
}

// tokenUsageRecord follows the thread's counter. Codex writes one
// token_usage_record per completed response (newer than rust-v0.149.0:
// TokenUsageRecord {usage, turn_token_usage, thread_token_usage}), before
// the token_count of the same response. Its thread_token_usage is the
// thread's cumulative usage; a token_count's total_token_usage need not be
// any more: 0.153.4 writes the turn's usage there, restarting each turn.
// So in a file that carries these records the thread counter is the one
// judged, and a token_count total that falls is what that version writes.
func (e *engine) tokenUsageRecord(pos Pos, p gjson.Result) {
	u := p.Get("thread_token_usage")
	if !u.IsObject() {
		return
	}
	e.threadCounter = true
	thread := readUsage(u).total
	if e.lastThread != nil && !e.skipThreadDecrease && thread < *e.lastThread {
		e.emit(pos, TokensTotalDecreasedEvidence{Previous: *e.lastThread, Got: thread, Counter: "thread_token_usage"})
	}
	e.lastThread = &thread
	e.skipThreadDecrease = false
}
