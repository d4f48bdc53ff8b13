// Package lineagegen writes Codex homes holding lineage trees for tests:
// rollouts that continue other rollouts the way Codex 0.153+ writes them.
//
// A paginated fork or revert continues its source's prefix by reference
// (session_meta.history_base {thread_id: the source's rollout id,
// end_ordinal_exclusive, end_byte_offset}) and numbers its own records from
// end_ordinal_exclusive; a fork also names its parent thread
// (forked_from_id, forked_from_ordinal_exclusive); a revert keeps its
// thread id and gets a file named rollout-<ts>-<thread>_<rollout>.jsonl; a
// sub-agent copies its parent's model context into its own file, the
// records before session_meta.subagent_history_start_ordinal. The shapes
// follow the forks Codex 0.153.4 and 0.171.0 made in
// internal/testkit/conformance/testdata/*/fork and the sources read for issue 23
// (rollout_lineage.rs, revert_thread.rs, live_thread.rs).
//
// Every rollout's own turns lean on what it inherits, so that a replay
// without the lineage would find faults that are not there: a turn's
// world-state patch needs the baseline of the root's first turn, a fork's
// rollback drops turns of its source. Output depends only on the tree: the
// same tree gives the same bytes. WriteFleet (fleet.go) writes many homes
// of such trees from a seed, for tests of a whole bucket of rollouts. It
// is a fixture generator (internal/testkit): used only by tests.
package lineagegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Node is one rollout of a tree.
type Node struct {
	Name string // the node's name in the tree (for tests)
	// Kind: "root", "fork", "revert" or "subagent".
	Kind string
	// Parent names the node this one continues ("" for a root).
	Parent string
	// Cut is how many of the parent's turns the node inherits (-1: all of
	// them, up to the parent's end).
	Cut int
	// Turns is how many turns of its own the node has.
	Turns int
	// Archived puts the file in archived_sessions/; Zst compresses it.
	Archived, Zst bool
	// Rollback makes the node's last record a rollback of this many user
	// turns (which may reach into the inherited ones).
	Rollback int
	// Compact ends each of the node's turns with a compaction whose
	// replacement_history keeps the turn's prompt and a summary: every
	// one but the last is superseded (reclaim's superseded-checkpoints).
	Compact bool
}

// File is a rollout written by Write.
type File struct {
	Node     Node
	Path     string // in the home
	Thread   string
	Rollout  string // the rollout id (Thread, except for a revert)
	Size     int64  // bytes, uncompressed
	Ordinals int64  // one past the last ordinal
	// MetaLine is 1: every file starts with its session_meta.
	MetaLine int
	// turnEnds are the byte offset and next ordinal after each own turn
	// (and after the inherited prefix, for a sub-agent): where a child may
	// cut.
	turnEnds []cut
}

type cut struct {
	offset, ordinal int64
}

// Tree is a lineage tree, its nodes parents first.
type Tree []Node

// Compacted is a parent whose turns each end with a compaction (two of
// its three checkpoints superseded) and a fork of it.
var Compacted = Tree{
	{Name: "parent", Kind: "root", Turns: 3, Compact: true},
	{Name: "fork", Kind: "fork", Parent: "parent", Cut: -1, Turns: 1, Compact: true},
}

// Standard is the tree of issue 23's fixtures: a parent, a fork, a fork of
// the fork cut inside it, a revert of the parent, an archived parent and
// its fork, a .zst parent and its fork, a sub-agent of the parent.
var Standard = Tree{
	{Name: "parent", Kind: "root", Turns: 3},
	{Name: "fork", Kind: "fork", Parent: "parent", Cut: -1, Turns: 2, Rollback: 3},
	{Name: "fork2", Kind: "fork", Parent: "fork", Cut: 1, Turns: 1},
	{Name: "revert", Kind: "revert", Parent: "parent", Cut: 2, Turns: 1},
	{Name: "archived", Kind: "root", Turns: 2, Archived: true},
	{Name: "archived-fork", Kind: "fork", Parent: "archived", Cut: -1, Turns: 1},
	{Name: "zst", Kind: "root", Turns: 2, Zst: true},
	{Name: "zst-fork", Kind: "fork", Parent: "zst", Cut: -1, Turns: 1},
	{Name: "subagent", Kind: "subagent", Parent: "parent", Cut: 2, Turns: 2},
}

// Write lays the tree out in the Codex home dir (created) and returns its
// files by node name.
func Write(dir string, t Tree) (map[string]*File, error) {
	return WriteAt(dir, t, Place{})
}

// Place is where in time and id space WriteAt puts a tree, so that many
// trees of one fleet get distinct ids and dates.
type Place struct {
	// Start is the first node's start (zero: 2026-09-09T04:00Z, Write's);
	// node i starts i hours later.
	Start time.Time
	// Salt goes into the last group of every id (0 for Write's ids): trees
	// with different salts never share an id.
	Salt uint32
}

// WriteAt is Write with the tree placed at p.
func WriteAt(dir string, t Tree, p Place) (map[string]*File, error) {
	if p.Start.IsZero() {
		p.Start = time.Date(2026, 9, 9, 4, 0, 0, 0, time.UTC)
	}
	if p.Salt >= 1<<24 {
		return nil, fmt.Errorf("lineagegen: salt %d does not fit in 24 bits", p.Salt)
	}
	files := map[string]*File{}
	for i, n := range t {
		start := p.Start.Add(time.Duration(i) * time.Hour)
		g := &gen{n: n, seq: i + 1, start: start, at: start, salt: p.Salt}
		var parent *File
		if n.Parent != "" {
			parent = files[n.Parent]
			if parent == nil {
				return nil, fmt.Errorf("lineagegen: %s: parent %s comes later or not at all", n.Name, n.Parent)
			}
		}
		f, data, err := g.file(dir, parent)
		if err != nil {
			return nil, err
		}
		files[n.Name] = f
		if err := writeFile(filepath.Join(dir, f.Path), data, n.Zst); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// Read returns the uncompressed bytes of a written file.
func Read(dir string, f *File) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, f.Path))
	if err != nil || !strings.HasSuffix(f.Path, ".zst") {
		return b, err
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(b, nil)
}

func writeFile(path string, data []byte, zst bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if zst {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			return err
		}
		data = enc.EncodeAll(data, nil)
		enc.Close()
	}
	return os.WriteFile(path, data, 0o644)
}

// gen writes one rollout.
type gen struct {
	n     Node
	seq   int
	start time.Time // the file-name time
	at    time.Time
	salt  uint32
	buf   bytes.Buffer
	ord   int64
	ids   int
}

func (g *gen) uuid(kind int) string {
	g.ids++
	ms := g.at.UnixMilli()
	return fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", ms>>16, ms&0xffff, g.seq, kind, uint64(g.salt)<<24|uint64(g.ids))
}

func (g *gen) tick() string {
	g.at = g.at.Add(1500 * time.Millisecond)
	return g.at.Format("2006-01-02T15:04:05.000Z")
}

func (g *gen) record(typ string, payload any) {
	line, err := json.Marshal(struct {
		Timestamp string `json:"timestamp"`
		Ordinal   int64  `json:"ordinal"`
		Type      string `json:"type"`
		Payload   any    `json:"payload"`
	}{g.tick(), g.ord, typ, payload})
	if err != nil {
		panic(err)
	}
	g.ord++
	g.buf.Write(line)
	g.buf.WriteByte('\n')
}

type obj = map[string]any

func (g *gen) file(dir string, parent *File) (*File, []byte, error) {
	n := g.n
	thread := g.uuid(0xa)
	f := &File{Node: n, Thread: thread, Rollout: thread, MetaLine: 1}
	meta := obj{"session_id": thread, "id": thread, "timestamp": g.at.Format("2006-01-02T15:04:05.000Z"),
		"cwd": "/home/dev/geo", "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec",
		"thread_source": "user", "model_provider": "openai",
		"base_instructions": obj{"text": "You are a coding agent running in the Codex CLI. (abridged)", "provenance": obj{"type": "model", "model": "gpt-5-codex"}},
		"history_mode":      "paginated", "multi_agent_version": "v2", "context_window": obj{"window_id": g.uuid(0xc)}}
	var inherit []byte // a sub-agent's copy of its parent's records
	switch n.Kind {
	case "root":
	case "fork", "revert":
		c, err := cutOf(parent, n.Cut)
		if err != nil {
			return nil, nil, fmt.Errorf("lineagegen: %s: %w", n.Name, err)
		}
		meta["history_base"] = obj{"thread_id": parent.Rollout, "end_ordinal_exclusive": c.ordinal, "end_byte_offset": c.offset}
		g.ord = c.ordinal
		if n.Kind == "fork" {
			meta["forked_from_id"] = parent.Thread
			meta["forked_from_ordinal_exclusive"] = c.ordinal
		} else {
			// A revert keeps the thread and its session metadata; only the
			// rollout is new (revert_thread.rs).
			f.Thread, f.Rollout = parent.Thread, thread
			meta["id"], meta["session_id"] = parent.Thread, parent.Thread
		}
	case "subagent":
		c, err := cutOf(parent, n.Cut)
		if err != nil {
			return nil, nil, fmt.Errorf("lineagegen: %s: %w", n.Name, err)
		}
		data, err := Read(dir, parent)
		if err != nil {
			return nil, nil, err
		}
		// The parent's records after its session_meta up to the cut,
		// renumbered from 1 as the sub-agent's own file numbers them.
		next := int64(1)
		for _, l := range bytes.SplitAfter(data[:c.offset], []byte("\n"))[1:] {
			if len(l) == 0 {
				continue
			}
			var rec map[string]json.RawMessage
			if err := json.Unmarshal(l, &rec); err != nil {
				return nil, nil, err
			}
			rec["ordinal"], _ = json.Marshal(next)
			next++
			inherit = append(append(inherit, orderedRecord(rec)...), '\n')
		}
		start := next
		meta["subagent_history_start_ordinal"] = start
		meta["source"] = obj{"subagent": obj{"thread_spawn": obj{"parent_thread_id": parent.Thread, "depth": 1, "agent_nickname": "reviewer", "agent_role": "reviewer"}}}
		meta["parent_thread_id"] = parent.Thread
	default:
		return nil, nil, fmt.Errorf("lineagegen: %s: unknown kind %q", n.Name, n.Kind)
	}
	g.record("session_meta", meta)
	if inherit != nil {
		g.buf.Write(inherit)
		g.ord += int64(bytes.Count(inherit, []byte("\n")))
		f.turnEnds = append(f.turnEnds, cut{int64(g.buf.Len()), g.ord})
	}
	for i := range n.Turns {
		g.turn(i)
		f.turnEnds = append(f.turnEnds, cut{int64(g.buf.Len()), g.ord})
	}
	if n.Rollback > 0 {
		g.record("event_msg", obj{"type": "thread_rolled_back", "num_turns": n.Rollback})
	}
	dirName := g.start.Format("sessions/2006/01/02")
	if n.Archived {
		dirName = "archived_sessions"
	}
	name := "rollout-" + g.startedAt() + "-" + f.Thread
	if f.Rollout != f.Thread {
		name += "_" + f.Rollout
	}
	name += ".jsonl"
	if n.Zst {
		name += ".zst"
	}
	f.Path = dirName + "/" + name
	f.Size, f.Ordinals = int64(g.buf.Len()), g.ord
	return f, g.buf.Bytes(), nil
}

// startedAt is the file-name time of the rollout (its first hour).
func (g *gen) startedAt() string {
	return g.start.Format("2006-01-02T15-04-05")
}

func cutOf(parent *File, turns int) (cut, error) {
	if turns < 0 {
		return cut{parent.Size, parent.Ordinals}, nil
	}
	if turns == 0 || turns > len(parent.turnEnds) {
		return cut{}, fmt.Errorf("cannot cut %s after %d turns: it has %d", parent.Node.Name, turns, len(parent.turnEnds))
	}
	return parent.turnEnds[turns-1], nil
}

// orderedRecord keeps the envelope's keys in Codex's order.
func orderedRecord(rec map[string]json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range []string{"timestamp", "ordinal", "type", "payload"} {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(rec[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (g *gen) turn(i int) {
	n := g.n
	turn := g.uuid(0x1)
	g.record("event_msg", obj{"type": "task_started", "turn_id": turn, "model_context_window": 258400, "collaboration_mode_kind": "default"})
	g.record("turn_context", obj{"turn_id": turn, "cwd": "/home/dev/geo", "approval_policy": "never", "sandbox_policy": obj{"type": "workspace-write"}, "model": "gpt-5-codex", "summary": "auto"})
	text := fmt.Sprintf("%s: step %d", n.Name, i+1)
	g.record("response_item", obj{"type": "message", "id": "msg_" + g.uuid(0x2), "role": "user", "content": []obj{{"type": "input_text", "text": text}}})
	g.record("event_msg", obj{"type": "user_message", "message": text, "images": []any{}})
	if n.Kind == "root" && i == 0 {
		g.record("world_state", obj{"full": true, "state": obj{"environment": obj{"cwd": "/home/dev/geo", "shell": "bash"}}})
	} else {
		g.record("world_state", obj{"full": false, "state": obj{"environment": obj{"cwd": fmt.Sprintf("/home/dev/geo/%s-%d", n.Name, i+1)}}})
	}
	call := "call_" + strings.ReplaceAll(g.uuid(0x3), "-", "")[:24]
	g.record("response_item", obj{"type": "function_call", "id": "fc_" + g.uuid(0x4), "name": "exec_command", "arguments": `{"cmd":"go test ./..."}`, "call_id": call})
	g.record("response_item", obj{"type": "function_call_output", "id": "fco_" + g.uuid(0x5), "call_id": call, "output": "ok\n"})
	g.record("response_item", obj{"type": "message", "id": "msg_" + g.uuid(0x6), "role": "assistant", "content": []obj{{"type": "output_text", "text": "done: " + text}}})
	g.record("event_msg", obj{"type": "token_count", "info": g.usage(i)})
	if n.Compact {
		summary := fmt.Sprintf("Summary of %s up to step %d: the tests pass.", n.Name, i+1)
		g.record("compacted", obj{"message": summary, "replacement_history": []obj{
			{"type": "message", "id": "msg_" + g.uuid(0x7), "role": "user", "content": []obj{{"type": "input_text", "text": text}}},
			{"type": "message", "id": "msg_" + g.uuid(0x8), "role": "assistant", "content": []obj{{"type": "output_text", "text": summary}}},
		}})
		// A compaction drops the world state: a new baseline follows it.
		g.record("world_state", obj{"full": true, "state": obj{"environment": obj{"cwd": "/home/dev/geo", "shell": "bash"}}})
	}
	g.record("event_msg", obj{"type": "task_complete", "turn_id": turn, "last_agent_message": "done: " + text})
}

// usage is a token_count info: each node's counter is its own (a fork's
// starts over), one request of 1,000 tokens per turn.
func (g *gen) usage(i int) obj {
	total := int64(i+1) * 1000
	return obj{"total_token_usage": obj{"input_tokens": total - 50*int64(i+1), "cached_input_tokens": 0, "output_tokens": 50 * int64(i+1), "reasoning_output_tokens": 0, "total_tokens": total},
		"last_token_usage":     obj{"input_tokens": 950, "cached_input_tokens": 0, "output_tokens": 50, "reasoning_output_tokens": 0, "total_tokens": 1000},
		"model_context_window": 258400}
}
