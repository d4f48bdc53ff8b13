// Package resumeinput rebuilds what Codex sends on resume: the items of
// the first request's `input` that Codex takes from the rollout, each as
// Codex sends it. It is derived from a replay (internal/derive): the
// engine (reconstruct) says which items are live and where each lies, and
// this package reads those items back from the files and applies what the
// resuming Codex version does to them on the way to the model (fields it
// does not send, ids it leaves out, items it makes itself).
//
// `rollout state --items` prints it, `rollout view` shows it and `rollout
// diff --items` compares it; the conformance goldens compare it with the
// request real Codex sent (internal/testkit/conformance), so the tests
// check this very code.
//
// What is not from the rollout is not here: newer versions put
// session_meta's base instructions first, as a developer message with an
// id Codex derives itself, and the new turn (its context and the prompt)
// follows the history.
package resumeinput

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Options say how to read the files back.
type Options struct {
	// Open is how the rollouts are opened again (the replay's options).
	Open rollout.OpenOptions
	// MaxLineBytes is the longest line read (0: rollout.DefaultMaxLineBytes).
	MaxLineBytes int64
}

// ErrStdin: the items are read back from the file after the replay, which
// standard input cannot give twice.
var ErrStdin = errors.New("the resume input is read back from the rollout after the replay: give a file, not standard input")

// Item is one item of the input: Raw as Codex sends it, and the history
// item it is (its file, line, and whether Codex makes it itself).
type Item struct {
	Raw  json.RawMessage
	From reconstruct.Item
	// Unmodelled names the record type of an item whose request shape is
	// not known (no Codex request has shown it): Raw is then the record's
	// payload as it is, not what Codex sends.
	Unmodelled string
}

// Raws is the items' JSON, in order.
func Raws(items []Item) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = it.Raw
	}
	return out
}

// Items yields the input items Codex st.ResumeVersion() sends on resume
// of the replayed file at path, in order. The state must come from a
// replay of path (and, for a lineage, of st.Segments), with the version
// that is to resume it (reconstruct.Options.ResumeVersion, or the
// writer's). Memory follows the history: the live items' lines are read
// back, one file at a time, and only the items are kept.
func Items(st *reconstruct.State, path string, o Options) ([]Item, error) {
	if path == rollout.StdinPath {
		return nil, ErrStdin
	}
	if st.History == nil || st.History.Len() == 0 {
		return []Item{}, nil
	}
	version := st.ResumeVersion()
	raws, recordTypes, provider, err := readBack(st, path, o)
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, st.History.Len())
	for it := range st.History.All() {
		k := key{it.Segment, it.Line, it.Index}
		switch it.Index {
		case reconstruct.SummaryIndex:
			out = append(out, Item{Raw: userMessage(gjson.GetBytes(raws[k], "message").String()), From: it})
			continue
		case reconstruct.BridgeIndex:
			var prompts []string
			for _, p := range st.Bridges[it.Line] {
				prompts = append(prompts, messageText(raws[key{p.Segment, p.Line, p.Index}]))
			}
			out = append(out, Item{Raw: userMessage(bridgeText(prompts, gjson.GetBytes(raws[k], "message").String())), From: it})
			continue
		case reconstruct.AbortedIndex:
			out = append(out, Item{Raw: abortedOutput(it.Type, it.CallID), From: it})
			continue
		}
		raw, ok := raws[k]
		if !ok {
			return nil, fmt.Errorf("%s: the history item at line %d was not found when read again (did the file change?)", pathOf(st, path, it.Segment), it.Line)
		}
		if hidden(raw) {
			continue
		}
		in := Item{Raw: sent(raw, version, provider), From: it}
		if t := recordTypes[k]; t != "" && t != "response_item" && t != "compacted" {
			in.Unmodelled = t
		}
		out = append(out, in)
	}
	return out, nil
}

// metaIndex marks the session_meta line among the lines read back.
const metaIndex = -100

// key names one history item: its file (the segment), its line and its
// place in the line.
type key struct{ seg, line, index int }

func pathOf(st *reconstruct.State, path string, seg int) string {
	if seg > 0 && seg <= len(st.Segments) {
		return st.Segments[seg-1].Path
	}
	return path
}

// readBack reads the live items' payloads from their files: for each
// file, the lines that hold an item, in one pass that ends after the last
// of them. A compacted line gives only the replacement_history entries
// the history holds, and the record itself for a summary or bridge.
func readBack(st *reconstruct.State, path string, o Options) (raws map[key][]byte, recordTypes map[key]string, provider string, err error) {
	wanted := map[int]map[int][]int{} // segment -> line -> indexes
	want := func(it reconstruct.Item) {
		lines := wanted[it.Segment]
		if lines == nil {
			lines = map[int][]int{}
			wanted[it.Segment] = lines
		}
		lines[it.Line] = append(lines[it.Line], it.Index)
	}
	for it := range st.History.All() {
		if it.Index != reconstruct.AbortedIndex {
			want(it)
		}
	}
	for _, prompts := range st.Bridges {
		for _, p := range prompts {
			want(p)
		}
	}
	if st.MetaLine > 0 {
		if wanted[0] == nil {
			wanted[0] = map[int][]int{}
		}
		wanted[0][st.MetaLine] = append(wanted[0][st.MetaLine], metaIndex)
	}
	raws, recordTypes = map[key][]byte{}, map[key]string{}
	for _, seg := range slices.Sorted(maps.Keys(wanted)) {
		if err := readSegment(pathOf(st, path, seg), seg, wanted[seg], raws, recordTypes, o); err != nil {
			return nil, nil, "", err
		}
	}
	provider = gjson.GetBytes(raws[key{0, st.MetaLine, metaIndex}], "model_provider").String()
	return raws, recordTypes, provider, nil
}

func readSegment(path string, seg int, lines map[int][]int, raws map[key][]byte, recordTypes map[key]string, o Options) error {
	last := 0
	for l := range lines {
		last = max(last, l)
	}
	f, err := rollout.OpenWith(path, nil, o.Open)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := rollout.NewReader(f, o.MaxLineBytes)
	defer rd.Release()
	for n := 1; n <= last; n++ {
		rec, err := rd.Next()
		if err == io.EOF {
			return fmt.Errorf("%s: the file ends at line %d, before the history item at line %d (did it change after the replay?)", path, n-1, last)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		idx, ok := lines[n]
		if !ok {
			continue
		}
		if rec.Line != n || rec.Raw == nil {
			return fmt.Errorf("%s: line %d: not readable again (longer than the maximum line size?)", path, n)
		}
		line := rec.Raw
		payload := gjson.GetBytes(line, "payload")
		envelope := payload.Exists()
		if !envelope { // the bare era: the line is the item
			payload = gjson.ParseBytes(line)
		}
		var history []gjson.Result
		for _, i := range idx {
			switch {
			case i >= 0:
				if history == nil {
					history = payload.Get("replacement_history").Array()
				}
				if i >= len(history) {
					return fmt.Errorf("%s: line %d: replacement_history has no item %d", path, n, i)
				}
				raws[key{seg, n, i}] = []byte(history[i].Raw)
			default:
				raws[key{seg, n, i}] = []byte(payload.Raw)
				if envelope {
					recordTypes[key{seg, n, i}] = gjson.GetBytes(line, "type").String()
				}
			}
		}
	}
	return nil
}

// hidden reports an item Codex keeps in its history but never sends:
// the git snapshots /undo restores (ghost_snapshot; ContextManager's
// for_prompt, codex-rs/core/src/context_manager/history.rs).
func hidden(raw []byte) bool {
	return gjson.GetBytes(raw, "type").String() == "ghost_snapshot"
}

// Fields Codex writes into a rollout's items and does not send as they
// are. Measured with the conformance harness: 0.169.0 and 0.171.0 write
// internal_chat_message_metadata_passthrough on the items of a turn;
// resumed with a custom provider they send none of it (turns3,
// compact-local); with the built-in "openai" provider they send it without
// its content_item_metadata (compact-remote).
var (
	openAIOnlyFields = []string{"internal_chat_message_metadata_passthrough"}
	fileOnlyFields   = []string{"internal_chat_message_metadata_passthrough.content_item_metadata"}
)

// openAIProvider is session_meta's model_provider of a thread on OpenAI's
// own API; a thread resumes with the provider it started with.
const openAIProvider = "openai"

// sent is item raw (a response item as the rollout holds it) as Codex
// version sends it to provider (session_meta's model_provider): the
// fields it keeps in the file removed, and those it sends only to OpenAI
// for another provider, and the id
// left out where that version leaves it out (reconstruct.QuirkSendsIDsByDefault,
// reconstruct.QuirkStripsBadIDs). The rest is the file's bytes, in the
// file's order.
func sent(raw []byte, version, provider string) json.RawMessage {
	out := raw
	drop := func(field string) {
		if gjson.GetBytes(out, field).Exists() {
			if b, err := sjson.DeleteBytes(out, field); err == nil {
				out = b
			}
		}
	}
	for _, f := range fileOnlyFields {
		drop(f)
	}
	if provider != openAIProvider {
		for _, f := range openAIOnlyFields {
			drop(f)
		}
	}
	if id := gjson.GetBytes(out, "id"); id.Exists() && !sendsID(id, gjson.GetBytes(out, "type").String(), version) {
		drop("id")
	}
	return json.RawMessage(bytes.Clone(out))
}

// sendsID says whether version sends an item's id (unknown versions: the
// newest behaviour).
func sendsID(id gjson.Result, itemType, version string) bool {
	sends, ok := reconstruct.Has(reconstruct.QuirkSendsIDsByDefault, version)
	if ok && !sends {
		return false
	}
	strips, ok := reconstruct.Has(reconstruct.QuirkStripsBadIDs, version)
	if ok && !strips {
		return true
	}
	if id.Type != gjson.String || id.String() == "" {
		return false
	}
	prefix, _, ok := rollout.SplitID(id.String())
	return ok && prefix != ""
}

func messageText(raw []byte) string {
	var b strings.Builder
	for _, c := range gjson.GetBytes(raw, "content").Array() {
		b.WriteString(c.Get("text").String())
	}
	return b.String()
}

func userMessage(text string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []part `json:"content"`
	}{"message", "user", []part{{"input_text", text}}})
	return b
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// abortedOutput is the output Codex sends for a call left without one
// (reconstruct.AbortedIndex): of the call's own kind, "aborted".
func abortedOutput(outputType, callID string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{outputType, callID, "aborted"})
	return b
}

// bridgeText is the one message Codex before 0.55 resumed a legacy
// compaction as (reconstruct.BridgeIndex): its template
// codex-rs/core/templates/compact/history_bridge.md, filled with the
// prompts before the compaction and the summary.
func bridgeText(prompts []string, summary string) string {
	users := strings.Join(prompts, "\n\n")
	if len(prompts) == 0 {
		users = "(none)"
	}
	if summary == "" {
		summary = "(no summary available)"
	}
	return "You were originally given instructions from a user over one or more turns. Here were the user messages:\n\n" +
		users + "\n\nAnother language model started to solve this problem and produced a summary of its thinking process. " +
		"You also have access to the state of the tools that were used by that language model. Use this to build on the work " +
		"that has already been done and avoid duplicating work. Here is the summary produced by the other language model, " +
		"use the information in this summary to assist with your own analysis:\n\n" + summary
}
