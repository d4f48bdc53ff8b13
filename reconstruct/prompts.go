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

// A prompt is announced by up to two events: user_message (every mode) and,
// in paginated files, item_completed with a UserMessage item (0.153 writes
// both after the response item). Each kind pairs with the items on its own,
// so that the second announcement of one prompt does not look like a prompt
// without its item.
type promptSource uint8

const (
	fromUserMessage promptSource = 1 << iota
	fromItemCompleted
)

type pendingPrompt struct {
	pos Pos
	key string
	src promptSource
}

type promptItem struct {
	key     string
	matched promptSource // the kinds of event already paired with it
}

type promptTracker struct {
	items  []promptItem    // user message items of the turn
	events []pendingPrompt // events not yet matched by an item
	unread bool            // a line since the last judgement was not read: it may hold the item
}

// item notes a user message of the history.
func (t *promptTracker) item(text string) {
	k := promptKey(text)
	if k == "" {
		return
	}
	it := promptItem{key: k}
	kept := t.events[:0]
	for _, p := range t.events {
		if it.matched&p.src == 0 && matchPrompt(p.key, k) {
			it.matched |= p.src
			continue
		}
		kept = append(kept, p)
	}
	t.events = kept
	t.items = append(t.items, it)
}

// event notes an announcement of a prompt by an event of kind src.
func (t *promptTracker) event(pos Pos, text string, src promptSource) {
	k := promptKey(text)
	if k == "" {
		return // an image-only prompt: nothing to compare
	}
	for i := range t.items {
		if it := &t.items[i]; it.matched&src == 0 && matchPrompt(k, it.key) {
			it.matched |= src
			return
		}
	}
	t.events = append(t.events, pendingPrompt{pos: pos, key: k, src: src})
}

// matchPrompt compares an event's key with an item's: equal, or one a
// prefix of the other (the item may carry the text in several parts).
func matchPrompt(ev, it string) bool {
	return strings.HasPrefix(ev, it) || strings.HasPrefix(it, ev)
}

// judge reports the events left without their item and starts over; it
// runs where a turn ends and at the end of the file.
func (e *engine) judgePrompts() {
	var reported []pendingPrompt
	for _, p := range e.prompts.events {
		if e.prompts.unread {
			break
		}
		if announcedBefore(reported, p) {
			continue // the other event of the same prompt: reported once
		}
		reported = append(reported, p)
		e.emit(p.pos, PromptMissingFromHistoryEvidence{Prompt: p.key})
	}
	e.prompts = promptTracker{}
}

// announcedBefore reports whether an event of the other kind already
// stands for p's prompt.
func announcedBefore(reported []pendingPrompt, p pendingPrompt) bool {
	for _, r := range reported {
		if r.src != p.src && matchPrompt(r.key, p.key) {
			return true
		}
	}
	return false
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
