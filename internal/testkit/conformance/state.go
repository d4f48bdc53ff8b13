package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// EngineHistory replays a rollout with rollout's engine, as `rollout
// state` does (the rollouts it continues found beside it, in its Codex
// home), and reduces its live history to Items read back from the files.
// Meant for small files (the goldens): the files are read whole.
func EngineHistory(path string) ([]Item, *reconstruct.State, error) {
	ix := lineage.ForFile(path)
	ro := reconstruct.ReplayOptions{Ancestry: func() *reconstruct.Ancestry { return ix.Ancestry(path) }}
	st, err := reconstruct.ReplayFile(path, nil, ro)
	if err != nil {
		return nil, nil, err
	}
	files := map[int][][]byte{}
	linesOf := func(seg int) ([][]byte, string, error) {
		p := path
		if seg > 0 {
			p = st.Segments[seg-1].Path
		}
		if l, ok := files[seg]; ok {
			return l, p, nil
		}
		l, err := readLines(p)
		files[seg] = l
		return l, p, err
	}
	items := []Item{}
	for it := range st.History.All() {
		lines, p, err := linesOf(it.Segment)
		if err != nil {
			return nil, nil, err
		}
		if it.Line < 1 || it.Line > len(lines) {
			return nil, st, fmt.Errorf("%s: history item at line %d of %d", p, it.Line, len(lines))
		}
		line := lines[it.Line-1]
		switch it.Index {
		case reconstruct.SummaryIndex:
			items = append(items, ItemOf(userMessage(gjson.GetBytes(line, "payload.message").String())))
			continue
		case reconstruct.AbortedIndex:
			b, _ := json.Marshal(map[string]string{"type": it.Type, "call_id": it.CallID, "output": "aborted"})
			items = append(items, ItemOf(b))
			continue
		case reconstruct.BridgeIndex:
			// The bridge's text is Codex's template around the prompts
			// and the summary: compared by type and role only.
			items = append(items, Item{Type: "message", Role: "user", Text: "(bridge)", Sum: AnyText})
			continue
		}
		raw := gjson.GetBytes(line, "payload")
		if !raw.Exists() { // the bare era: the line is the item
			raw = gjson.ParseBytes(line)
		}
		if it.Index >= 0 {
			raw = raw.Get("replacement_history").Array()[it.Index]
		}
		if raw.Get("type").String() == "ghost_snapshot" {
			// Codex keeps the git snapshots /undo restores in its history
			// and drops them from every request (ContextManager::for_prompt,
			// codex-rs/core/src/context_manager/history.rs): not sent, so
			// not compared.
			continue
		}
		items = append(items, ItemOf([]byte(raw.Raw)))
	}
	return items, st, nil
}

// readLines reads a rollout's lines (a .zst decompressed).
func readLines(path string) ([][]byte, error) {
	f, err := rollout.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			out = append(out, bytes.TrimRight(line, "\r\n"))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// AnyText is the Sum of an engine item whose text is not modelled: it
// matches an item of the same type and role whatever its text.
const AnyText = "*"

func matches(engine, codex Item) bool {
	if engine.Sum == AnyText {
		return engine.Type == codex.Type && engine.Role == codex.Role
	}
	return engine.Key() == codex.Key()
}

func userMessage(text string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": text}}})
	return b
}

// Diff describes how got (the engine's history) differs from want (what
// Codex rebuilt), "" when they agree.
func Diff(got, want []Item) string {
	// A plain alignment: the common prefix and suffix, then both middles.
	p := 0
	for p < len(got) && p < len(want) && matches(got[p], want[p]) {
		p++
	}
	if p == len(got) && p == len(want) {
		return ""
	}
	s := 0
	for s < len(got)-p && s < len(want)-p && matches(got[len(got)-1-s], want[len(want)-1-s]) {
		s++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "engine %d items, Codex %d; from item %d:\n", len(got), len(want), p)
	for _, it := range got[p : len(got)-s] {
		fmt.Fprintf(&b, "  only engine: %s\n", it)
	}
	for _, it := range want[p : len(want)-s] {
		fmt.Fprintf(&b, "  only Codex:  %s\n", it)
	}
	return b.String()
}
