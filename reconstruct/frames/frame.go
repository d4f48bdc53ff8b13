package frames

import (
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// Block kinds: the prefix of a block event's type.
const (
	KindText             = "text"
	KindThinking         = "thinking"
	KindToolCall         = "toolcall"
	KindReasoningSummary = "reasoning_summary"
)

// frame is what the replay needs from one frame. Byte slices are views into
// the line: valid only while it is.
type frame struct {
	typ     string // the event type: assistantMessageEvent.type inside message_update
	wrapped bool   // a message_update wrapper
	noType  bool   // the frame (or its wrapped event) has no string type
	kind    string // block events: KindText ...
	phase   string // block events: "start", "delta" or "end"
	index   int    // contentIndex; -1 when absent or not an integer
	delta   []byte // raw JSON of "delta"
	content []byte // raw JSON of a *_end's "content"
	tool    []byte // raw JSON of toolcall_end's "toolCall"
	message []byte // raw JSON of "message" (done, message_start, message_end)
}

// parseFrame reads one frame; raw must be one valid JSON object. The walk
// skips values it does not need (partial messages of megabytes) at memchr
// speed and copies nothing.
func parseFrame(raw []byte) frame {
	f := frame{index: -1}
	var typ, event []byte
	rollout.Members(raw, func(key []byte, start, end int) bool {
		v := raw[start:end]
		switch string(key) {
		case "type":
			if typ == nil {
				typ = v
			}
		case "assistantMessageEvent":
			event = v
		case "message":
			f.message = v
		default:
			f.member(key, v)
		}
		return true
	})
	outer, ok := jsonString(typ)
	f.typ = outer
	f.noType = !ok
	if outer == "message_update" && len(event) > 0 && event[0] == '{' {
		f.wrapped = true
		var inner []byte
		f.delta, f.content, f.tool, f.index = nil, nil, nil, -1
		rollout.Members(event, func(key []byte, start, end int) bool {
			v := event[start:end]
			if string(key) == "type" {
				if inner == nil {
					inner = v
				}
				return true
			}
			f.member(key, v)
			return true
		})
		f.typ, ok = jsonString(inner)
		f.noType = !ok
	}
	f.kind, f.phase = blockType(f.typ)
	return f
}

func (f *frame) member(key, v []byte) {
	switch string(key) {
	case "contentIndex":
		if n, err := strconv.Atoi(string(v)); err == nil && n >= 0 {
			f.index = n
		}
	case "delta":
		f.delta = v
	case "content":
		f.content = v
	case "toolCall":
		f.tool = v
	}
}

// blockType splits "thinking_delta" into ("thinking", "delta"); other types
// give empty strings.
func blockType(t string) (kind, phase string) {
	i := strings.LastIndexByte(t, '_')
	if i < 0 {
		return "", ""
	}
	kind, phase = t[:i], t[i+1:]
	switch phase {
	case "start", "delta", "end":
	default:
		return "", ""
	}
	switch kind {
	case KindText, KindThinking, KindToolCall, KindReasoningSummary:
		return kind, phase
	}
	return "", ""
}

// jsonString decodes a raw JSON string; ok is false for anything else.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if s, ok := rollout.StringValue(v); ok {
		return string(s), true
	}
	return rollout.DecodeString(v), true
}

// member returns the raw value of a top-level key of a JSON object.
func member(obj []byte, key string) []byte {
	var out []byte
	rollout.Members(obj, func(k []byte, start, end int) bool {
		if string(k) == key {
			out = obj[start:end]
			return false
		}
		return true
	})
	return out
}

// messageKind maps the type of a message content element to a block kind.
func messageKind(t string) string {
	switch t {
	case "text":
		return KindText
	case "thinking":
		return KindThinking
	case "toolCall":
		return KindToolCall
	case "reasoning_summary", "reasoningSummary":
		return KindReasoningSummary
	}
	return t
}

// contentValue extracts the comparable content of a message content element
// of a known kind: the text, the thinking, the tool call's arguments (raw
// JSON), the summary. ok is false when the element does not carry it.
func contentValue(kind string, elem []byte) (raw []byte, ok bool) {
	var field string
	switch kind {
	case KindText:
		field = "text"
	case KindThinking:
		field = "thinking"
	case KindToolCall:
		field = "arguments"
	case KindReasoningSummary:
		if v := member(elem, "summary"); len(v) > 0 && v[0] == '"' {
			return v, true
		}
		field = "text"
	default:
		return nil, false
	}
	v := member(elem, field)
	return v, v != nil
}
