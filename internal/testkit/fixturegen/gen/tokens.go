package gen

import "github.com/rollout-dev/rollout/rollout"

// Token accounting: the token_count of each model request, its rate
// limits, and the compactions that reset the window.

// request writes the token_count of one model request whose output was
// out tokens (reasoning of them reasoning tokens).
func (g *generator) request(out, reasoning int64) {
	input := g.fill + g.pending
	var cached int64
	if !g.compactedSinceRequest {
		cached = min(g.fill&^127, input)
	}
	g.compactedSinceRequest = false
	last := usage{in: input, cached: cached, out: out, reasoning: reasoning}
	g.total.in += last.in
	g.total.cached += last.cached
	g.total.out += last.out
	g.total.reasoning += last.reasoning
	g.fill = input + out
	g.pending = 0
	if g.fill > g.window {
		// Cannot happen with the compaction threshold; keep the invariant loud.
		panic("gen: context fill exceeds the window")
	}
	g.st.PeakFill = max(g.st.PeakFill, g.fill)

	g.begin("event_msg")
	l := append(g.line, `{"type":"token_count","info":{"total_token_usage":`...)
	l = appendUsage(l, g.total)
	l = append(l, `,"last_token_usage":`...)
	l = appendUsage(l, last)
	l = append(l, `,"model_context_window":`...)
	l = appendInt(l, g.window)
	l = append(l, `},"rate_limits":`...)
	if g.r.IntN(10) == 0 {
		l = append(l, "null"...)
	} else {
		l = append(l, `{"primary":`...)
		l = g.appendLimit(l, 300)
		l = append(l, `,"secondary":`...)
		l = g.appendLimit(l, 10080)
		l = append(l, `,"credits":null,"plan_type":"plus"}`...)
	}
	g.line = append(l, '}')
	g.lastTC = append(g.lastTC[:0], g.line[g.payload:]...)
	g.st.TokenCounts++
	g.end()
	if g.r.IntN(7) == 0 {
		// Codex often re-emits the same snapshot right after.
		g.tick(1, 3)
		g.begin("event_msg")
		g.line = append(g.line, g.lastTC...)
		g.st.TokenCounts++
		g.st.Reemitted++
		g.end()
	}
}

func appendUsage(l []byte, u usage) []byte {
	l = append(l, `{"input_tokens":`...)
	l = appendInt(l, u.in)
	l = append(l, `,"cached_input_tokens":`...)
	l = appendInt(l, u.cached)
	l = append(l, `,"output_tokens":`...)
	l = appendInt(l, u.out)
	l = append(l, `,"reasoning_output_tokens":`...)
	l = appendInt(l, u.reasoning)
	l = append(l, `,"total_tokens":`...)
	l = appendInt(l, u.in+u.out)
	return append(l, '}')
}

// appendLimit writes a rate-limit window whose usage follows the clock.
func (g *generator) appendLimit(l []byte, minutes int64) []byte {
	span := minutes * 60_000
	start := g.ms - g.ms%span
	permille := (g.ms - start) * 850 / span
	l = append(l, `{"used_percent":`...)
	l = appendInt(l, permille/10)
	l = append(l, '.')
	l = appendInt(l, permille%10)
	l = append(l, `,"window_minutes":`...)
	l = appendInt(l, minutes)
	l = append(l, `,"resets_at":`...)
	l = appendInt(l, (start+span)/1000)
	return append(l, '}')
}

func (g *generator) compact() {
	g.tick(2000, 20000)
	g.winNum++
	g.st.Compactions++
	prev := g.curWin
	g.curWin = g.uuidString()
	g.tmp = appendProse(g.tmp[:0], g.r, 500+g.r.IntN(3500))

	g.begin("compacted")
	l := append(g.line, `{"message":`...)
	l = rollout.AppendJSONString(l, g.tmp)
	l = append(l, `,"replacement_history":[`...)
	post := g.baseTokens
	for _, h := range g.recentUsers {
		l = append(l, h.payload...)
		l = append(l, ',')
		post += h.tokens
	}
	l = g.appendID(append(l, `{"type":"message","id":"`...), "msg")
	l = append(l, `","role":"user","content":[{"type":"input_text","text":`...)
	g.tmp2 = append(g.tmp2[:0], "Another language model started to solve this problem and produced a summary of its thinking process. Use it to build on the work that has already been done.\n\n"...)
	g.tmp2 = append(g.tmp2, g.tmp...)
	l = rollout.AppendJSONString(l, g.tmp2)
	post += tokensOf(len(g.tmp2))
	l = append(l, `}]}],"window_number":`...)
	l = appendInt(l, int64(g.winNum))
	l = append(l, `,"first_window_id":"`...)
	l = append(l, g.firstWin...)
	l = append(l, `","previous_window_id":"`...)
	l = append(l, prev...)
	l = append(l, `","window_id":"`...)
	l = append(l, g.curWin...)
	g.line = append(l, `"}`...)
	g.end()

	g.tick(1, 10)
	g.event(`{"type":"context_compacted"}`)
	g.fill = post
	g.pending = 0
	g.compactedSinceRequest = true
	g.haveBaseline = false
	g.needFull = true
}
