package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/rollout-dev/rollout/schema"
	"github.com/spf13/cobra"
)

type stateOptions struct {
	path         string
	atLine       int
	maxLineBytes int64
	thread       string
	output       string
	force        bool
}

func newStateCmd(a *app, runF func(context.Context, *stateOptions) error) *cobra.Command {
	opts := &stateOptions{}
	cmd := &cobra.Command{
		Use:   "state FILE",
		Short: "Print the reconstructed thread state as JSON",
		Long: `state replays a rollout as resume does and prints the result: thread id, era,
history mode, turns (ids, status, whether rolled back), the live history (item
ids and types in order), the world-state baseline, the context-window lineage,
the restored token usage and the latest record of each handoff.`,
		Example: `  rollout state fixtures/clean/envelope-paginated.jsonl
  rollout state --at-line 12 rollout.jsonl | jq .history`,
		Args: argsAtMost(1, "one FILE (or --thread ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := fileOrThread(cmd, args, opts.thread)
			if err != nil {
				return err
			}
			opts.path = path
			if opts.atLine < 0 {
				return usageError("", "invalid --at-line %d", opts.atLine)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runState(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().IntVar(&opts.atLine, "at-line", 0, "stop the replay after line N")
	cmd.Flags().Int64Var(&opts.maxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to analyse")
	cmd.Flags().BoolVar(&opts.force, "force", false, "read a file whose first line is not a JSON object (a damaged first line)")
	addThreadFlag(cmd.Flags(), &opts.thread, "read")
	addOutput(cmd.Flags(), &opts.output, "the state")
	return cmd
}

// stateJSON is the designed output of `rollout state` (not the engine's structs).
type stateJSON struct {
	SchemaVersion int             `json:"schema_version"`
	Path          string          `json:"path"`
	ThreadID      string          `json:"thread_id"`
	Era           string          `json:"era"`
	HistoryMode   string          `json:"history_mode"`
	CLIVersion    string          `json:"cli_version"`
	Records       int             `json:"records"`
	Turns         []turnJSON      `json:"turns"`
	History       []itemJSON      `json:"history"`
	WorldState    json.RawMessage `json:"world_state"`
	Lineage       lineageJSON     `json:"lineage"`
	Tokens        *tokensJSON     `json:"token_usage"`
	Handoffs      []handoffJSON   `json:"handoffs"`
}

type turnJSON struct {
	ID         string `json:"id"`
	Line       int    `json:"line"`
	Status     string `json:"status"`
	User       bool   `json:"user_turn"`
	RolledBack bool   `json:"rolled_back"`
	// Derived: the file persists no turn events (Codex before about 0.104),
	// so the turn starts at a user message, as Codex's rollback counts it.
	Derived bool `json:"derived,omitempty"`
}

type itemJSON struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	CallID string `json:"call_id,omitempty"`
	Line   int    `json:"line"`
	Index  *int   `json:"replacement_index,omitempty"`
	// Synthesized names an item Codex makes on resume from the record at
	// Line: "compaction_summary" or "compaction_bridge" (a legacy
	// compaction's user message), "aborted_output" (the output Codex sends
	// for the call at Line, which has none).
	Synthesized string `json:"synthesized,omitempty"`
}

type lineageJSON struct {
	FirstWindowID string `json:"first_window_id"`
	WindowID      string `json:"window_id"`
	WindowNumber  int64  `json:"window_number"`
}

type tokensJSON struct {
	Line        int   `json:"line"`
	Fill        int64 `json:"context_fill"`
	Window      int64 `json:"model_context_window"`
	TotalTokens int64 `json:"total_tokens"`
	Input       int64 `json:"input_tokens"`
	Cached      int64 `json:"cached_input_tokens"`
	Output      int64 `json:"output_tokens"`
	Requests    int   `json:"requests"`
	Reemitted   int   `json:"reemitted"`
}

type handoffJSON struct {
	ID     string          `json:"id"`
	Line   int             `json:"line"`
	Record json.RawMessage `json:"record"`
}

func runState(ctx context.Context, a *app, o *stateOptions) error {
	if o.path == rollout.StdinPath {
		a.io.stdinHint("a rollout")
	}
	if err := checkOutputsOf([]string{o.path}, o.output); err != nil {
		return err
	}
	ro := checks.Options{MaxLineBytes: o.maxLineBytes, Force: o.force}.Replay()
	ro.StopAfterLine = o.atLine
	st, err := reconstruct.ReplayFile(o.path, a.io.In, ro)
	if err != nil {
		return err
	}
	out := buildStateJSON(o.path, st)
	return writeOutput(a, o.output, "the state", func(w io.Writer) error { return writeJSON(w, out) })
}

func buildStateJSON(path string, st *reconstruct.State) stateJSON {
	out := stateJSON{SchemaVersion: schema.Version(schema.State), Path: path, ThreadID: st.ThreadID, Era: string(st.Era),
		HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion, Records: st.Records,
		Turns: []turnJSON{}, History: []itemJSON{}, Handoffs: []handoffJSON{},
		WorldState: json.RawMessage("null"),
		Lineage:    lineageJSON{st.Lineage.FirstWindowID, st.Lineage.WindowID, st.Lineage.WindowNumber}}
	for _, t := range st.Turns {
		out.Turns = append(out.Turns, turnJSON{t.ID, t.StartLine, t.Status, t.User, t.RolledBack, t.Derived})
	}
	for it := range st.History.All() {
		j := itemJSON{ID: it.ID, Type: it.Type, CallID: it.CallID, Line: it.Line}
		switch {
		case it.Index >= 0:
			idx := it.Index
			j.Index = &idx
		case it.Index == reconstruct.SummaryIndex:
			j.Synthesized = "compaction_summary"
		case it.Index == reconstruct.BridgeIndex:
			j.Synthesized = "compaction_bridge"
		case it.Index == reconstruct.AbortedIndex:
			j.Synthesized = "aborted_output"
		}
		out.History = append(out.History, j)
	}
	if st.WorldState != nil {
		out.WorldState = st.WorldState.AppendJSON(nil)
	}
	if t := st.Tokens; t != nil {
		out.Tokens = &tokensJSON{t.Line, t.Fill, t.Window, t.TotalTokens, t.InputTokens, t.CachedInput, t.OutputTokens, t.RequestsSeen, st.Reemitted}
	}
	for _, id := range st.HandoffIDs() {
		h := st.Handoffs[id]
		out.Handoffs = append(out.Handoffs, handoffJSON{h.ID, h.Line, json.RawMessage(h.Raw)})
	}
	return out
}
