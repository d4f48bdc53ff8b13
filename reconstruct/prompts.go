package reconstruct

import (
	"bytes"
	"strings"
)

// Prompts pair each user_message event with the user message of the model
// history. Codex persists both in legacy mode (the event for the UI, the
// response item for the model); a resume rebuilds the model's history from
// the response items only, so an event without its item means the model
// resumes with the answers and tool calls of a turn but not its question.

// promptKey is what two spellings of one prompt share: the first bytes of
// the trimmed text (the item splits text into parts, the event joins them).
func promptKey(text string) string {
	t := strings.TrimSpace(text)
	if len(t) > 64 {
		t = t[:64]
	}
	return t
}

type pendingPrompt struct {
	pos Pos
	key string
}

type promptTracker struct {
	items  []string        // keys of user message items not yet matched by an event
	events []pendingPrompt // user_message events not yet matched by an item
	unread bool            // a line since the last judgement was not read: it may hold the item
}

// item notes a user message of the history.
func (t *promptTracker) item(text string) {
	k := promptKey(text)
	if k == "" {
		return
	}
	for i, p := range t.events {
		if matchPrompt(p.key, k) {
			t.events = append(t.events[:i], t.events[i+1:]...)
			return
		}
	}
	t.items = append(t.items, k)
}

// event notes a user_message event.
func (t *promptTracker) event(pos Pos, text string) {
	k := promptKey(text)
	if k == "" {
		return // an image-only prompt: nothing to compare
	}
	for i, it := range t.items {
		if matchPrompt(k, it) {
			t.items = append(t.items[:i], t.items[i+1:]...)
			return
		}
	}
	t.events = append(t.events, pendingPrompt{pos: pos, key: k})
}

// matchPrompt compares an event's key with an item's: equal, or one a
// prefix of the other (the item may carry the text in several parts).
func matchPrompt(ev, it string) bool {
	return strings.HasPrefix(ev, it) || strings.HasPrefix(it, ev)
}

// judge reports the events left without their item and starts over; it
// runs where a turn ends and at the end of the file.
func (e *engine) judgePrompts() {
	for _, p := range e.prompts.events {
		if e.prompts.unread {
			break
		}
		e.emit(p.pos, PromptMissingFromHistoryEvidence{Prompt: p.key})
	}
	e.prompts = promptTracker{}
}

// carries reports whether raw JSON holds the prompt's key as a string.
func carries(raw []byte, key string) bool {
	if key == "" || len(raw) == 0 {
		return false
	}
	enc := appendJSONText(nil, key)
	return bytes.Contains(raw, enc)
}

// appendJSONText is key as it appears inside a JSON string (no quotes).
func appendJSONText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			return b // rare control bytes: compare the part before them
		default:
			b = append(b, c)
		}
	}
	return b
}
