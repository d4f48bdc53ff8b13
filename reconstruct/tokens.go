package reconstruct

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/rollout"
)

type usage struct {
	input, cached, cacheWrite, output, reasoning, total int64
}

func readUsage(u gjson.Result) usage { x, _ := readUsageRaw([]byte(u.Raw)); return x }

// readUsageRaw reads a usage object from its raw JSON (valid: the line was
// validated), as gjson's ForEach and Int would: the last of repeated keys
// wins. hasTotal reports a total_tokens member.
func readUsageRaw(raw []byte) (x usage, hasTotal bool) {
	members(raw, func(key, v []byte) {
		switch string(key) {
		case "input_tokens":
			x.input = jsonInt(v)
		case "cached_input_tokens":
			x.cached = jsonInt(v)
		case "cache_write_input_tokens":
			x.cacheWrite = jsonInt(v)
		case "output_tokens":
			x.output = jsonInt(v)
		case "reasoning_output_tokens":
			x.reasoning = jsonInt(v)
		case "total_tokens":
			x.total, hasTotal = jsonInt(v), true
		}
	})
	return x, hasTotal
}

// members walks the members of a raw JSON object; a key with escapes is
// decoded first (keys are compared, not kept: the slice is only valid
// during the call).
func members(raw []byte, fn func(key, v []byte)) {
	rollout.Members(raw, func(k []byte, start, end int) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			k = []byte(gjson.ParseBytes(append(append([]byte{'"'}, k...), '"')).Str)
		}
		fn(k, raw[start:end])
		return true
	})
}

// jsonInt is gjson's Int of a raw value: digits are read directly, any
// other value (a float, a string, true) as gjson reads it.
func jsonInt(v []byte) int64 {
	if len(v) > 0 && len(v) < 19 {
		neg := v[0] == '-'
		d := v
		if neg {
			d = v[1:]
		}
		n := int64(0)
		ok := len(d) > 0
		for _, c := range d {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if ok {
			if neg {
				return -n
			}
			return n
		}
	}
	return gjson.ParseBytes(v).Int()
}

// tokenCount follows a token_count event; info is the raw JSON of its
// "info" member (nil: none).
func (e *engine) tokenCount(rec *rollout.Record, pos Pos, info []byte) {
	if len(info) == 0 || info[0] != '{' {
		return
	}
	// One walk of info, the first of repeated keys winning as in gjson's Get.
	var totalRaw, lastRaw []byte
	var window int64
	seenWindow := false
	members(info, func(key, v []byte) {
		switch string(key) {
		case "total_token_usage":
			if totalRaw == nil {
				totalRaw = v
			}
		case "last_token_usage":
			if lastRaw == nil {
				lastRaw = v
			}
		case "model_context_window":
			if !seenWindow {
				window, seenWindow = jsonInt(v), true
			}
		}
	})
	total, _ := readUsageRaw(totalRaw)
	if e.lastTotal != nil && *e.lastTotal == total {
		e.reemitted++
		if e.reemitted == 1 {
			e.firstReemitted = pos // reported at the end, with the count
		}
		if e.st.Tokens != nil {
			e.mutableTokens().ReemittedSeen++
		}
		return
	}
	if e.lastTotal != nil && !e.skipDecrease && !e.threadCounter && total.total < e.lastTotal.total {
		e.emit(pos, TokensTotalDecreasedEvidence{Previous: e.lastTotal.total, Got: total.total, Counter: "total_token_usage"})
	}
	lu, hasTotal := readUsageRaw(lastRaw)
	fill := lu.total
	if !hasTotal {
		fill = lu.input + lu.output
	}
	if window > 0 && fill > window {
		e.emit(pos, TokensOverWindowEvidence{Fill: fill, Window: window})
	}
	ts, _ := rollout.StringValue(rec.Timestamp())
	e.emit(pos, FlowTokenCountEvidence{Fill: fill, Window: window,
		Input: lu.input, Cached: lu.cached, Output: lu.output, Total: total.total,
		Timestamp: string(ts)})
	setLast(&e.lastTotal, total)
	e.skipDecrease, e.skipThreadDecrease = false, false
	seen := 1
	if e.st.Tokens != nil {
		seen = e.st.Tokens.RequestsSeen + 1
	}
	*e.mutableTokens() = TokenInfo{Line: pos.Line, Fill: fill, Window: window, TotalTokens: total.total,
		InputTokens: total.input, CachedInput: total.cached, OutputTokens: total.output,
		ReasoningOut: total.reasoning, RequestsSeen: seen}
}

// mutableTokens returns st.Tokens to change in place: a copy of it when a
// turn checkpoint may hold it (copy on write: a token count per request
// allocated one TokenInfo each).
func (e *engine) mutableTokens() *TokenInfo {
	if !e.ownTokens || e.st.Tokens == nil {
		t := new(TokenInfo)
		if e.st.Tokens != nil {
			*t = *e.st.Tokens
		}
		e.st.Tokens, e.ownTokens = t, true
	}
	return e.st.Tokens
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
	setLast(&e.lastThread, thread)
	e.skipThreadDecrease = false
}
