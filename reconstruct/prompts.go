package reconstruct

import (
	"bytes"
	"strings"
)

// Prompts: a turn whose prompt was announced by an event but whose history
// holds no user input item. Codex persists a prompt twice in a turn: the
// user input item for the model, and an event for the UI (user_message in
// legacy mode, item_completed with a UserMessage item in paginated mode).
// Resume rebuilds the model's history from the response items alone
// (Session::reconstruct_history_from_rollout: RolloutItem::EventMsg(_)
// changes nothing), so a turn with the event and no item resumes without
// its question. The two are never paired by their text: redaction writes
// the two copies differently and a pasted image puts tags and the image
// before the text in the item. The structure is judged: whether the turn
// holds any user input item at all.

// promptKey is the first bytes of a prompt's trimmed text: what the
// message of a finding quotes, and what compaction/lost-prompt compares.
func promptKey(text string) string {
	t := strings.TrimSpace(text)
	if len(t) > 64 {
		t = t[:64]
	}
	return t
}

// matchPrompt compares two keys: equal, or one a prefix of the other (an
// item may carry the text in several parts).
func matchPrompt(a, b string) bool {
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// A prompt is announced by up to two kinds of event: user_message (legacy
// mode) and item_completed with a UserMessage item (paginated mode). A file
// can hold both for one prompt (a converted legacy file), so each kind is
// counted on its own and the larger count is the number of prompts.
type promptSource uint8

const (
	fromUserMessage promptSource = iota
	fromItemCompleted
)

// promptTracker counts, within one turn, the prompt announcements, the
// user input items and the other model-visible items.
type promptTracker struct {
	events  [2]int // announcements by kind
	first   Pos    // the first announcement beyond the input items so far
	text    string // its first bytes
	excess  bool   // first is set
	inputs  int    // user message and inter-agent items
	answers int    // every other item: what the model sees of the turn
	unread  bool   // a line of the turn was not read: it may hold the item
}

// input notes a user input item of the history.
func (t *promptTracker) input() { t.inputs++ }

// answer notes another item of the turn's history.
func (t *promptTracker) answer() { t.answers++ }

// event notes an announcement of a prompt by an event of kind src.
// Codex writes the item before its event, so an announcement that
// outnumbers the inputs seen so far is the candidate for a prompt without
// its item.
func (t *promptTracker) event(pos Pos, text string, src promptSource) {
	t.events[src]++
	if !t.excess && t.events[src] > t.inputs {
		t.first, t.text, t.excess = pos, promptKey(text), true
	}
}

// promptVerdict is a turn without its prompt, reported at the end of the
// file unless the turn is rolled back (Codex drops it then, question and
// answers alike).
type promptVerdict struct {
	pos  Pos
	turn *turnState // nil: before any turn
	ev   PromptMissingFromHistoryEvidence
}

// judgePrompts ends the turn's count; it runs where a turn ends (at its
// closing event, the next turn's start, a derived turn's next user
// message) and at the end of the file. A turn started at a user message
// (a file with no turn events) holds its item by construction: there an
// announcement beyond the turn's items has none.
func (e *engine) judgePrompts() {
	t := e.prompts
	e.prompts = promptTracker{}
	prompts := max(t.events[0], t.events[1])
	missing := prompts > 0 && t.inputs == 0
	if e.turn != nil && e.turn.derived {
		missing = prompts > t.inputs
	}
	if !missing || t.unread {
		return
	}
	e.promptVerdicts = append(e.promptVerdicts, promptVerdict{pos: t.first, turn: e.turn,
		ev: PromptMissingFromHistoryEvidence{Prompt: t.text, Answered: t.answers > 0}})
}

// reportPrompts reports the turns without their prompt that survive.
func (e *engine) reportPrompts() {
	for _, v := range e.promptVerdicts {
		if v.turn == nil || !v.turn.RolledBack {
			e.emit(v.pos, v.ev)
		}
	}
	e.promptVerdicts = nil
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
