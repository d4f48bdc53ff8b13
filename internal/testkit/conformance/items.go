package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Item is a history item reduced to what identifies it: the same item read
// from a rollout and from a request body gives the same Key, whatever
// fields Codex adds or strips on the way (ids, status, metadata).
type Item struct {
	Type   string `json:"type"`
	Role   string `json:"role,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
	// Text is the start of the item's text, for people reading a golden.
	Text string `json:"text,omitempty"`
	// Sum is a digest of the item's whole text.
	Sum string `json:"sum"`
}

// Key identifies the item for comparison.
func (i Item) Key() string {
	return i.Type + "|" + i.Role + "|" + i.CallID + "|" + i.Name + "|" + i.Sum
}

func (i Item) String() string {
	s := i.Type
	if i.Role != "" {
		s += "/" + i.Role
	}
	if i.Name != "" {
		s += " " + i.Name
	}
	if i.CallID != "" {
		s += " " + i.CallID
	}
	if i.Text != "" {
		s += " " + strconvQuote(i.Text)
	}
	return s
}

func strconvQuote(s string) string {
	r := strings.NewReplacer("\n", `\n`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// ItemOf reduces one item (a response item's JSON).
func ItemOf(raw []byte) Item {
	it := gjson.ParseBytes(raw)
	i := Item{Type: it.Get("type").String(), Role: it.Get("role").String(),
		CallID: it.Get("call_id").String(), Name: it.Get("name").String()}
	text := itemText(it)
	sum := sha256.Sum256([]byte(text))
	i.Sum = hex.EncodeToString(sum[:6])
	i.Text = abbreviate(text, 60)
	return i
}

func itemText(it gjson.Result) string {
	var b strings.Builder
	texts := func(arr gjson.Result) {
		for _, c := range arr.Array() {
			if t := c.Get("text"); t.Exists() {
				b.WriteString(t.String())
			} else if c.Type == gjson.String {
				b.WriteString(c.String())
			}
		}
	}
	switch it.Get("type").String() {
	case "message":
		texts(it.Get("content"))
	case "reasoning":
		texts(it.Get("summary"))
	case "function_call":
		b.WriteString(it.Get("arguments").String())
	case "custom_tool_call":
		b.WriteString(it.Get("input").String())
	case "local_shell_call":
		for _, a := range it.Get("action.command").Array() {
			b.WriteString(a.String())
			b.WriteByte(' ')
		}
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		out := it.Get("output")
		switch {
		case out.IsArray():
			texts(out)
		case out.IsObject():
			if c := out.Get("content"); c.Type == gjson.String {
				b.WriteString(c.String())
			} else {
				texts(c)
			}
		default:
			b.WriteString(out.String())
		}
	case "compaction", "compaction_summary":
		b.WriteString(it.Get("encrypted_content").String())
	}
	return b.String()
}

func abbreviate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
