package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Step is one Codex invocation of a scenario.
type Step struct {
	// Op: "exec" (a new session), "review" (codex exec review PROMPT: a
	// new session that is a review, 0.77+), "tui" (a new session in the
	// interactive codex under tmux: PROMPT, then each of Args typed as a
	// command, e.g. /undo), "resume" or "fork" (of the
	// session the scenario made first), "codex" (Args as a subcommand, "ID" standing
	// for that session's id), "rpc" (Args: requests to codex app-server,
	// each "METHOD {PARAMS}" with "ID" for the session's id, "LASTTURN"
	// for the id of the session's last turn, or ThreadPlaceholder for the
	// thread an earlier answer named, and an optional " until
	// NOTIFICATION" to wait for; a first arg "--experimental" enables the
	// experimental API; each must succeed), "sql" (Args: DATABASE QUERY, a
	// read-only query of one of the home's databases, e.g. state_5.sqlite,
	// its rows recorded as the step's output: what Codex keeps only in
	// SQLite), "interrupt" (a resume, or the first session, whose turn is
	// interrupted with SIGINT once the mock answered its slowshell or held
	// its hold: Home.Interrupt), or "place" (Args: VERSION SCENARIO, the
	// rollouts of that golden put into the home, as an older Codex left
	// them).
	Op     string   `json:"op"`
	Prompt string   `json:"prompt,omitempty"`
	Args   []string `json:"args,omitempty"`
	// Config holds -c overrides for this step only.
	Config []string `json:"config,omitempty"`
}

// Scenario is a script of steps that makes a session with a given shape.
type Scenario struct {
	Name string `json:"name"`
	// Since is the first version that can run it ("" for every version);
	// Before, when set, the first that cannot.
	Since  string `json:"since,omitempty"`
	Before string `json:"before,omitempty"`
	// Remote: the built-in provider pointed at the mock (remote compaction).
	Remote bool `json:"remote,omitempty"`
	// Git: the working directory is a git repository (what /undo needs).
	Git   bool   `json:"git,omitempty"`
	Steps []Step `json:"steps"`
	// Judge names the rollout the oracle resumes: "first" (the session's
	// own file, the default), "newest" (the last one created, a fork) or
	// "child" (the newest rollout of another session: a sub-agent's).
	Judge string `json:"judge,omitempty"`
}

// OraclePrompt is the prompt of the resume whose first request is the
// oracle.
const OraclePrompt = Marker + " msg"

// compactLimit makes a "big" step (Mock.BigUsage tokens) trigger an
// auto-compaction and an ordinary one (1,000) not.
const compactLimit = "model_auto_compact_token_limit=50000"

// Scenarios are the golden scenarios, oldest first.
var Scenarios = []Scenario{
	{Name: "turns3", Steps: []Step{
		{Op: "exec", Prompt: Marker + " reason,plan,msg"},
		{Op: "resume", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,shell,plan,msg"},
	}},
	{Name: "compact-local", Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,big,shell,shell,msg", Config: []string{compactLimit}},
		{Op: "resume", Prompt: Marker + " shell,msg"},
	}},
	{Name: "compact-remote", Since: "0.153.0", Remote: true, Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,big,shell,shell,msg", Config: []string{compactLimit}},
		{Op: "resume", Prompt: Marker + " shell,msg"},
	}},
	{Name: "fork", Since: "0.153.0", Judge: "newest", Steps: []Step{
		{Op: "exec", Prompt: Marker + " reason,plan,msg"},
		{Op: "resume", Prompt: Marker + " shell,msg"},
		{Op: "fork", Prompt: Marker + " shell,msg"},
	}},
	{Name: "migrate", Since: "0.169.0", Steps: []Step{
		{Op: "place", Args: []string{"0.125.0", "turns3"}},
		{Op: "codex", Args: []string{"migrate-rollouts"}},
		{Op: "codex", Args: []string{"migrate-rollouts", "--apply"}},
		{Op: "resume", Prompt: Marker + " shell,msg"},
	}},
	// /undo of the TUI restores the git snapshot Codex took at the turn's
	// start (undo_completed); 0.104.0 no longer knows the command.
	{Name: "undo", Since: "0.77.0", Before: "0.104.0", Git: true, Steps: []Step{
		{Op: "tui", Prompt: Marker + " shell,msg", Args: []string{"/undo"}},
		{Op: "resume", Prompt: Marker + " plan,msg"},
	}},
	// codex exec review makes a session of its own (and one for the
	// reviewer); it is resumed like any other.
	{Name: "review", Since: "0.77.0", Steps: []Step{
		{Op: "review", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " plan,msg"},
	}},
	{Name: "rollback", Since: rollbackSince, Before: rollbackBefore, Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,plan,msg"},
		rollbackRPC,
	}},
	// The rolled-back turn compacted (rollback/compacted-turn,
	// openai/codex#32851).
	{Name: "rollback-compacted", Since: rollbackSince, Before: rollbackBefore, Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,big,shell,shell,msg", Config: []string{compactLimit}},
		rollbackRPC,
	}},
	{Name: "archive", Since: "0.147.0", Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "codex", Args: []string{"archive", "ID"}},
		{Op: "codex", Args: []string{"unarchive", "ID"}},
		{Op: "resume", Prompt: Marker + " plan,msg"},
	}},
	// A side conversation: thread/fork with attachToSource (experimental
	// in 0.171.0) makes a paginated fork whose threads row names its
	// parent in attached_thread_parent_id, an edge only SQLite keeps. The
	// parent goes on after the fork; the oracle resumes the attached
	// thread.
	{Name: "attached", Since: "0.171.0", Judge: "newest", Steps: []Step{
		{Op: "exec", Prompt: Marker + " reason,plan,msg"},
		{Op: "rpc", Args: []string{"--experimental", `thread/fork {"threadId":"ID","attachToSource":true}`}},
		{Op: "sql", Args: []string{"state_5.sqlite", attachedQuery}},
		{Op: "resume", Prompt: Marker + " shell,msg"},
	}},
	// A thread started in app-server with a dynamic tool (session_meta's
	// dynamic_tools), a turn that calls it (the harness answers
	// item/tool/call), a resume that compacts (the compacted record's
	// resume_metadata.dynamic_tools), then an ordinary resume.
	{Name: "dynamic-tools", Since: "0.171.0", Steps: []Step{
		{Op: "rpc", Args: []string{"--experimental", dynamicThreadStart,
			appServerTurn("dynamic,msg")}},
		{Op: "resume", Prompt: Marker + " reason,big,shell,shell,msg", Config: []string{compactLimit}},
		{Op: "resume", Prompt: Marker + " shell,msg"},
	}},
	// Async compaction (0.171's async_compaction feature, under
	// development): in codex app-server with the built-in provider, a
	// response over 1% of the window compacts mid-turn without
	// model_auto_compact_token_limit (the default, 90%, is not reached).
	// codex exec does not compact so.
	{Name: "compact-async", Since: "0.171.0", Remote: true, Steps: []Step{
		{Op: "rpc", Config: asyncCompaction, Args: []string{"thread/start {}",
			appServerTurn("shell,msg"), appServerTurn("reason,big,shell,shell,msg"), appServerTurn("shell,msg")}},
	}},
	// Items injected through app-server (thread/inject_items: Codex gives
	// them ids and writes a line-level metadata member) and a compaction
	// asked for by the client (thread/compact/start), in a thread with a
	// dynamic tool, then a turn that calls it.
	{Name: "inject-compact", Since: "0.171.0", Steps: []Step{
		{Op: "rpc", Args: []string{"--experimental", dynamicThreadStart, appServerTurn("shell,msg"),
			`thread/inject_items {"threadId":"` + ThreadPlaceholder + `","items":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Injected by the client."}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Injected reply."}]}]}`,
			`thread/compact/start {"threadId":"` + ThreadPlaceholder + `"} until turn/completed`,
			appServerTurn("dynamic,msg")}},
	}},
	// A fork of a thread with a dynamic tool (codex exec fork): what the
	// child's session_meta says of the tool set, and the child resumed.
	{Name: "fork-dynamic-tools", Since: "0.171.0", Judge: "newest", Steps: []Step{
		{Op: "rpc", Args: []string{"--experimental", dynamicThreadStart, appServerTurn("dynamic,msg")}},
		{Op: "fork", Prompt: Marker + " shell,msg"},
	}},
	// A turn interrupted (Ctrl-C: SIGINT to codex exec) while its shell
	// command runs: what Codex records (turn_aborted, the call without
	// its output) and what it rebuilds from that.
	{Name: "interrupted", Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "interrupt", Prompt: Marker + " reason,plan,slowshell,msg"},
	}},
	// The parent spawns a sub-agent whose task is a script of its own
	// (ChildPrompt), waits for it and ends its turn; the parent is judged.
	{Name: "subagent", Since: agentsSince, Steps: []Step{
		{Op: "exec", Prompt: Marker + " spawn,wait,msg", Config: agentFeatures},
	}},
	// The same, the sub-agent's own rollout judged.
	{Name: "subagent-child", Since: agentsSince, Judge: "child", Steps: []Step{
		{Op: "exec", Prompt: Marker + " spawn,wait,msg", Config: agentFeatures},
	}},
	// thread/revert (replaces a paginated thread's history with the
	// prefix before a turn) in place of thread/rollback.
	{Name: "revert", Since: revertSince, Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,plan,msg"},
		revertRPC,
	}},
	// The reverted turn compacted (what rollback-compacted is to
	// rollback).
	{Name: "revert-compacted", Since: revertSince, Steps: []Step{
		{Op: "exec", Prompt: Marker + " shell,msg"},
		{Op: "resume", Prompt: Marker + " reason,big,shell,shell,msg", Config: []string{compactLimit}},
		revertRPC,
	}},
}

// attachedQuery records each thread's attached parent, history mode and
// the name of its rollout (the directories are the case's).
const attachedQuery = `SELECT id, ifnull(attached_thread_parent_id, '-'), history_mode, replace(rollout_path, rtrim(rollout_path, replace(rollout_path, '/', '')), '') FROM threads ORDER BY id`

// appServerTurn is an rpc step's turn/start of the thread the step
// started, with a script for the mock, waiting for the turn's end.
func appServerTurn(script string) string {
	return `turn/start {"threadId":"` + ThreadPlaceholder + `","input":[{"type":"text","text":"` + Marker + " " + script + `"}]} until turn/completed`
}

// asyncCompaction turns on 0.171's async compaction (a feature table) at
// 1% of the context window.
var asyncCompaction = []string{"features.async_compaction.enabled=true", "features.async_compaction.model_async_compact_threshold_percent=1"}

// dynamicThreadStart starts an app-server thread that declares
// DynamicToolName (DynamicToolSpec, written out).
var dynamicThreadStart = func() string {
	b, _ := json.Marshal(map[string]any{"dynamicTools": []any{DynamicToolSpec()}})
	return "thread/start " + string(b)
}()

// RunsOn reports whether version v can run the scenario.
func (sc Scenario) RunsOn(v string) bool {
	return AtLeast(v, sc.Since) && (sc.Before == "" || !AtLeast(v, sc.Before))
}

// rollbackSince: 0.104.0 is the first golden version whose codex
// app-server has thread/rollback (0.77.0's generated JSON schema has
// none); from 0.148.0 on it answers
// "paginated threads do not support thread/rollback" for the threads
// Codex makes, and thread/revert takes its place (revertSince).
const rollbackSince, rollbackBefore = "0.104.0", "0.148.0"

// agentsSince: 0.104.0 is the first golden version with spawn_agent
// (the collab feature; its wait tool is "wait" to 0.107.0); later ones call the
// feature multi_agent (on by default in 0.171.0; the tools sit in the
// multi_agent_v1 namespace from 0.139.0). A version warns about, and ignores, the
// name it does not know.
const agentsSince = "0.104.0"

var agentFeatures = []string{"features.collab=true", "features.multi_agent=true"}

// revertSince: the first golden version whose app-server knows
// thread/revert (0.147.0's binary has no such string); the revert writes
// a new rollout whose session_meta.history_base is the prefix before the
// turn.
const revertSince = "0.148.0"

// revertRPC resumes the thread in codex app-server and reverts it to
// before its last turn (0.148.0 refuses thread/revert without the
// experimental API: "requires experimentalApi capability").
var revertRPC = Step{Op: "rpc", Args: []string{"--experimental", `thread/resume {"threadId":"ID"}`, `thread/revert {"threadId":"ID","beforeTurnId":"LASTTURN"}`}}

// rollbackRPC resumes the thread in codex app-server and rolls back its
// last user turn.
var rollbackRPC = Step{Op: "rpc", Args: []string{`thread/resume {"threadId":"ID"}`, `thread/rollback {"threadId":"ID","numTurns":1}`}}

// AtLeast reports whether version v is at least min (numeric x.y.z).
func AtLeast(v, min string) bool {
	if min == "" {
		return true
	}
	a, b := parseVersion(v), parseVersion(min)
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

func parseVersion(v string) [3]int {
	var out [3]int
	v, _, _ = strings.Cut(v, "-")
	for i, p := range strings.SplitN(v, ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	return out
}

// StepResult is one step as it ran.
type StepResult struct {
	Step
	ExitCode int      `json:"exit_code"`
	Answers  []string `json:"answers"` // what the mock answered, per request
	Changes  []Change `json:"changes"`
	Stderr   string   `json:"stderr,omitempty"` // the tail, when the step failed
	Stdout   string   `json:"stdout,omitempty"` // the tail, of a "codex" step
}

// Session is what a scenario left behind.
type Session struct {
	Version  string
	Scenario Scenario
	Home     *Home
	ID       string // the id of the session the scenario started
	Steps    []StepResult
	// Rollouts lists the rollout files, relative to the home.
	Rollouts []string
	// Judged is the rollout the oracle resumes (relative to the home).
	Judged string
}

// Generate runs a scenario with Codex c in a fresh home under dir; goldens
// is the golden directory "place" steps read.
func Generate(ctx context.Context, c *Codex, m *Mock, sc Scenario, dir, goldens string) (*Session, error) {
	h, err := NewHome(dir, c, m)
	if err != nil {
		return nil, err
	}
	h.Remote = sc.Remote
	if sc.Git {
		if err := h.gitWork(ctx); err != nil {
			return nil, err
		}
	}
	s := &Session{Version: c.Version, Scenario: sc, Home: h}
	for i, st := range sc.Steps {
		hc := *h
		hc.Config = append(append([]string(nil), h.Config...), st.Config...)
		var r *Run
		switch st.Op {
		case "place":
			r, err = place(h, goldens, st.Args)
		case "exec":
			r, err = hc.Exec(ctx, st.Prompt)
		case "resume":
			r, err = hc.Resume(ctx, s.ID, st.Prompt)
		case "fork":
			r, err = hc.Fork(ctx, s.ID, st.Prompt)
		case "interrupt":
			r, err = hc.Interrupt(ctx, s.ID, st.Prompt)
		case "tui":
			r, err = hc.TUI(ctx, st.Prompt, st.Args)
		case "review":
			r, err = hc.Run(ctx, hc.ExecArgs([]string{"review"}, st.Prompt)...)
		case "rpc":
			r, err = rpcStep(ctx, &hc, st.Args, s.ID)
		case "sql":
			r, err = sqlStep(&hc, st.Args)
		case "codex":
			args := make([]string, len(st.Args))
			for j, a := range st.Args {
				args[j] = strings.ReplaceAll(a, "ID", s.ID)
			}
			r, err = hc.Run(ctx, args...)
		default:
			return nil, fmt.Errorf("conformance: %s step %d: unknown op %q", sc.Name, i, st.Op)
		}
		if err != nil {
			return nil, fmt.Errorf("conformance: %s %s step %d: %w", c.Version, sc.Name, i, err)
		}
		sr := StepResult{Step: st, ExitCode: r.ExitCode, Changes: r.Changes}
		for _, q := range r.Responses() {
			sr.Answers = append(sr.Answers, q.Answer)
		}
		if r.ExitCode != 0 {
			sr.Stderr = tail([]byte(r.Stderr), 1500)
		}
		if st.Op == "codex" || st.Op == "rpc" || st.Op == "tui" || st.Op == "sql" {
			sr.Stdout = tail([]byte(r.Stdout), 1500)
		}
		s.Steps = append(s.Steps, sr)
		if r.ExitCode != 0 && st.Op != "interrupt" { // an interrupted exec may exit non-zero
			return s, fmt.Errorf("conformance: %s %s step %d (%s) exited %d: %s", c.Version, sc.Name, i, st.Op, r.ExitCode, tail([]byte(r.Stderr), 1500))
		}
		if s.ID == "" {
			if rs := h.Rollouts(); len(rs) > 0 {
				s.ID = SessionID(filepath.Join(h.Dir, rs[0]))
				s.Judged = rs[0]
			}
			if s.ID == "" {
				return s, fmt.Errorf("conformance: %s %s: the first step made no rollout", c.Version, sc.Name)
			}
		}
		if st.Op == "fork" || (st.Op == "rpc" && sc.Judge == "newest") {
			for _, ch := range r.Changes {
				if ch.What == "created" && isRolloutName(ch.Path) {
					s.Judged = ch.Path
				}
			}
		}
	}
	s.Rollouts = h.Rollouts()
	if sc.Judge == "child" {
		// The sub-agent's rollout: the newest one not the session's.
		for _, r := range s.Rollouts {
			if !strings.Contains(filepath.Base(r), s.ID) && (s.Judged == "" || strings.Contains(s.Judged, s.ID) || r > s.Judged) {
				s.Judged = r
			}
		}
		if strings.Contains(s.Judged, s.ID) {
			return s, fmt.Errorf("conformance: %s %s: no sub-agent rollout", c.Version, sc.Name)
		}
		return s, nil
	}
	if sc.Judge != "newest" {
		// The session may have moved (archive and unarchive).
		for _, r := range s.Rollouts {
			if strings.Contains(filepath.Base(r), s.ID) {
				s.Judged = r
			}
		}
	}
	return s, nil
}

// rpcStep sends the requests of an "rpc" step to codex app-server; a
// request answered with an error fails the step (exit code 1, the errors
// in Stderr).
func rpcStep(ctx context.Context, h *Home, args []string, id string) (*Run, error) {
	var reqs []RPC
	experimental := len(args) > 0 && args[0] == "--experimental"
	if experimental {
		args = args[1:]
	}
	for _, a := range args {
		if strings.Contains(a, "LASTTURN") {
			turn, err := lastTurnID(h, id)
			if err != nil {
				return nil, err
			}
			a = strings.ReplaceAll(a, "LASTTURN", turn)
		}
		a, until := cutUntil(a)
		method, params, _ := strings.Cut(strings.ReplaceAll(a, "ID", id), " ")
		q := RPC{Method: method, Params: map[string]any{}, Until: until}
		if params != "" {
			if err := json.Unmarshal([]byte(params), &q.Params); err != nil {
				return nil, fmt.Errorf("rpc %q: %w", a, err)
			}
		}
		reqs = append(reqs, q)
	}
	serve := h.AppServer
	if experimental {
		serve = h.AppServerExperimental
	}
	r, results, err := serve(ctx, reqs)
	if err != nil {
		return nil, err
	}
	for _, res := range results {
		if res.Error != nil {
			r.ExitCode = 1
			r.Stderr += fmt.Sprintf("%s: %s\n", res.Method, res.Error)
		}
	}
	r.Stdout = ""
	for _, res := range results {
		r.Stdout += fmt.Sprintf("%s: %s\n", res.Method, abbreviate(string(res.Result), 300))
	}
	return r, nil
}

// cutUntil splits "METHOD {PARAMS} until NOTIFICATION" into the request
// and the notification to wait for.
func cutUntil(arg string) (req, until string) {
	i := strings.LastIndex(arg, " until ")
	if i < 0 || strings.ContainsAny(arg[i+len(" until "):], " {}\"") {
		return arg, ""
	}
	return arg[:i], arg[i+len(" until "):]
}

// place puts the rollouts of golden VERSION/SCENARIO into the home.
func place(h *Home, goldens string, args []string) (*Run, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("place wants VERSION SCENARIO, got %q", args)
	}
	g, err := ReadGolden(filepath.Join(goldens, args[0], args[1]))
	if err != nil {
		return nil, err
	}
	root := filepath.Join(goldens, args[0], args[1], "session")
	b, err := os.ReadFile(filepath.Join(root, g.Judged))
	if err != nil {
		return nil, err
	}
	before, err := snapshot(h.Dir)
	if err != nil {
		return nil, err
	}
	if err := h.Place(map[string][]byte{g.Judged: b}); err != nil {
		return nil, err
	}
	after, err := snapshot(h.Dir)
	if err != nil {
		return nil, err
	}
	return &Run{Args: append([]string{"place"}, args...), Changes: diffSnapshots(h.Dir, before, after)}, nil
}

// SessionID reads a rollout's session id from its first line (session_meta
// of the envelope era, or the bare era's first object).
func SessionID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 1<<16).ReadBytes('\n')
	if id := gjson.GetBytes(line, "payload.id").String(); id != "" {
		return id
	}
	return gjson.GetBytes(line, "id").String()
}

// Oracle is what Codex did when it resumed one rollout in a fresh home: the
// first request it sent carries the history it rebuilt.
type Oracle struct {
	ExitCode int    `json:"exit_code"`
	Stderr   string `json:"stderr,omitempty"` // the tail, when it failed
	// Answer is what the mock made of the first request ("msg" for the
	// prompt's turn; "summary" or "compaction" when Codex compacted first).
	Answer string `json:"first_answer,omitempty"`
	// Input is the first request's input; Rebuilt the part of it Codex took
	// from the rollout, NewTurn the rest (the new turn's context and prompt,
	// as Codex appended them to the rollout).
	Rebuilt []Item `json:"rebuilt"`
	NewTurn []Item `json:"new_turn"`
	// Input is that input verbatim, each item as Codex sent it: what
	// `rollout state --items` must rebuild (its first len(Rebuilt) items,
	// after the instructions message when Instructions is set).
	Input []json.RawMessage `json:"input,omitempty"`
	// Split tells how Input was split: "appended" (the items Codex appended
	// for the new turn end the input), "prompt" (they did not: cut before
	// the prompt), "none" (no request).
	Split string `json:"split"`
	// Wrote lists what the resume did to the home's rollouts: "appended
	// PATH +N lines", "created PATH", ...
	Wrote []string `json:"wrote"`
	// FirstAppended is the first line Codex appended to the resumed file,
	// abbreviated: shows whether it landed on a torn tail.
	FirstAppended string `json:"first_appended,omitempty"`
	// Instructions: the input began with session_meta's base
	// instructions as a developer message (left out of Rebuilt).
	Instructions bool `json:"instructions_message,omitempty"`
	// GluedToTail: the file ended without a newline and Codex appended
	// straight onto that fragment, so its first new record is part of an
	// unreadable line.
	GluedToTail bool `json:"glued_to_tail,omitempty"`
	// Requests counts the model requests of the resume.
	Requests int `json:"requests"`
}

// Resume places files (contents by path relative to a CODEX_HOME, e.g.
// "sessions/2026/01/02/rollout-....jsonl": a rollout and the rollouts it
// continues) in a fresh home under dir, resumes the session id with
// OraclePrompt and tells what Codex did to rollout rel.
// remote resumes with the built-in provider (a thread started with it
// refuses another on resume).
//
// When the session was made by this harness and its case directory is gone
// (the generating home removed), the fresh home is made at the same paths:
// versions that rebuild the initial context on resume (after a legacy
// compaction) write the working directory and CODEX_HOME's skill paths
// into it, and a resume elsewhere would differ by those paths alone.
func Resume(ctx context.Context, c *Codex, m *Mock, files map[string][]byte, rel, id, dir string, remote bool) (*Oracle, error) {
	if cwd := sessionCwd(files[rel]); cwd != "" && filepath.Base(cwd) == "work" {
		caseDir := filepath.Dir(cwd)
		if _, err := os.Stat(caseDir); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(harnessRoot(cwd)); errors.Is(err, fs.ErrNotExist) {
				defer os.RemoveAll(harnessRoot(cwd))
			}
			dir = caseDir
		}
	}
	h, err := NewHome(dir, c, m)
	if err != nil {
		return nil, err
	}
	h.Remote = remote
	if err := h.Place(files); err != nil {
		return nil, err
	}
	r, err := h.Resume(ctx, id, OraclePrompt)
	if err != nil {
		return nil, err
	}
	o := oracleOf(r, rel, baseInstructions(files[rel]))
	if b := files[rel]; len(b) > 0 && b[len(b)-1] != '\n' && o.FirstAppended != "" {
		o.GluedToTail = true // the first appended line is the fragment's end
	}
	return o, nil
}

// sessionCwd is session_meta's cwd when it is a working directory this
// harness made (in a rollout-conformance-* directory of its temporary
// root), "" otherwise.
func sessionCwd(rollout []byte) string {
	first, _, _ := bytes.Cut(rollout, []byte("\n"))
	cwd := filepath.Clean(gjson.GetBytes(first, "payload.cwd").String())
	if !filepath.IsAbs(cwd) || harnessRoot(cwd) == "" {
		return ""
	}
	return cwd
}

// harnessRoot is the rollout-conformance-* directory right below the
// harness's temporary root (TempRoot, or this process's temporary
// directory) that holds p, "" when there is none.
func harnessRoot(p string) string {
	for _, root := range []string{TempRoot(), os.TempDir()} {
		rel, err := filepath.Rel(root, p)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if strings.HasPrefix(top, harnessPrefix) {
			return filepath.Join(root, top)
		}
	}
	return ""
}

// harnessPrefix starts the name of every directory the harness makes a
// case in.
const harnessPrefix = "rollout-conformance-"

// TempRoot is where the harness makes its case directories: /tmp when it
// is a shared temporary directory (world-writable and sticky), else the
// process's temporary directory. Codex writes the paths of a case into
// the rollouts it makes (session_meta.cwd, the environment context, skill
// paths under CODEX_HOME), and the goldens keep them as Codex wrote them:
// so they name /tmp/rollout-conformance-N/... on every Unix machine, not
// a per-user temporary directory (macOS's /var/folders/...).
func TempRoot() string {
	if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky != 0 {
		return "/tmp"
	}
	return os.TempDir()
}

// NewCaseDir makes a new, empty harness directory under TempRoot: the
// directory a scenario or a corruption runs in (remove it after).
func NewCaseDir() (string, error) { return os.MkdirTemp(TempRoot(), harnessPrefix) }

// baseInstructions is the text of session_meta's base_instructions.
func baseInstructions(rollout []byte) string {
	first, _, _ := bytes.Cut(rollout, []byte("\n"))
	return gjson.GetBytes(first, "payload.base_instructions.text").String()
}

func oracleOf(r *Run, rel, instructions string) *Oracle {
	o := &Oracle{ExitCode: r.ExitCode, Rebuilt: []Item{}, NewTurn: []Item{}, Wrote: []string{}, Split: "none"}
	if r.ExitCode != 0 {
		o.Stderr = tail([]byte(r.Stderr), 800)
	}
	var appended []byte
	for _, ch := range r.Changes {
		if !isRolloutName(ch.Path) {
			continue
		}
		n := bytes.Count(ch.Appended, []byte("\n"))
		switch ch.What {
		case "appended":
			o.Wrote = append(o.Wrote, fmt.Sprintf("appended %s +%d lines", ch.Path, n))
		case "created":
			o.Wrote = append(o.Wrote, fmt.Sprintf("created %s %d lines", ch.Path, n))
		default:
			o.Wrote = append(o.Wrote, fmt.Sprintf("%s %s", ch.What, ch.Path))
		}
		if ch.Path == rel && ch.What == "appended" {
			appended = ch.Appended
			first, _, _ := bytes.Cut(appended, []byte("\n"))
			o.FirstAppended = abbreviate(string(first), 120)
		}
	}
	reqs := r.Responses()
	o.Requests = len(reqs)
	if len(reqs) == 0 {
		return o
	}
	o.Answer = reqs[0].Answer
	var input []Item
	for _, it := range gjson.GetBytes(reqs[0].Body, "input").Array() {
		input = append(input, ItemOf([]byte(it.Raw)))
		o.Input = append(o.Input, json.RawMessage(it.Raw))
	}
	// Newer versions send session_meta's base instructions as the first
	// developer message: not history, so not part of Rebuilt.
	if len(input) > 0 && instructions != "" && input[0].Type == "message" && input[0].Role == "developer" &&
		input[0].Sum == ItemOf(developerMessage(instructions)).Sum {
		o.Instructions, input = true, input[1:]
	}
	// The new turn's items, as Codex appended them: response items up to
	// the prompt.
	var turn []Item
	for _, line := range bytes.Split(appended, []byte("\n")) {
		if gjson.GetBytes(line, "type").String() != "response_item" {
			continue
		}
		it := ItemOf([]byte(gjson.GetBytes(line, "payload").Raw))
		turn = append(turn, it)
		if it.Type == "message" && it.Role == "user" && it.Text == OraclePrompt {
			break
		}
	}
	if len(turn) > 0 && len(turn) <= len(input) && sameKeys(input[len(input)-len(turn):], turn) {
		o.Split = "appended"
		o.Rebuilt, o.NewTurn = input[:len(input)-len(turn)], input[len(input)-len(turn):]
		return o
	}
	o.Split = "prompt"
	cut := len(input)
	for i := len(input) - 1; i >= 0; i-- {
		if input[i].Type == "message" && input[i].Role == "user" && input[i].Text == OraclePrompt {
			cut = i
			break
		}
	}
	o.Rebuilt, o.NewTurn = input[:cut], input[cut:]
	return o
}

func sameKeys(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key() != b[i].Key() {
			return false
		}
	}
	return true
}

// Versions are the versions the goldens cover, one or more per era and
// one on each side of the quirk boundaries of reconstruct/quirks.go
// (minor versions 48, 55, 107, 140, 142, 143, 145, 148, 150).
var Versions = []string{"0.40.0", "0.47.0", "0.55.0", "0.58.0", "0.77.0", "0.104.0", "0.106.0", "0.107.0",
	"0.125.0", "0.139.0", "0.142.5", "0.144.6", "0.145.0", "0.147.0", "0.148.0", "0.150.1", "0.153.4",
	"0.160.1", "0.165.0", "0.171.0"}

func developerMessage(text string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "message", "role": "developer", "content": []map[string]string{{"type": "input_text", "text": text}}})
	return b
}
