package conformance

// Difference is a case where rollout's engine and Codex still disagree.
type Difference struct {
	// Why says what Codex does (its evidence is the golden's oracle) and
	// why the engine does not follow yet.
	Why   string
	Owner string // who fixes it, when another helper owns the rule
}

// KnownDifferences lists, by "VERSION/SCENARIO", the goldens where `rollout
// state` does not rebuild what Codex rebuilt. Each is also listed in
// docs/codex-replay.md. TestGoldens fails on a difference not listed here
// and on a listed one that has gone.
var KnownDifferences = map[string]Difference{
	"0.104.0/rollback-compacted": {Why: "Codex 0.104.0 rebuilds the legacy compaction of the rolled-back turn (the context, both prompts, the summary as a user message) and its rollback then drops the summary as the newest user turn: it sends the rolled-back prompt and no summary. rollout state follows the rollback (turn 1 as it was); verify says so with rollback/compacted-turn (warning).",
		Owner: "realfiles (rollback/compacted-turn)"},
	"0.106.0/rollback-compacted": {Why: "Codex 0.106.0, whose compaction is still legacy, rebuilds the rolled-back turn's compaction (the first prompt, the initial context it makes anew, the rolled-back prompt) and its rollback drops the summary as the newest user turn: 4 items, the rolled-back prompt among them. rollout state follows the rollback (turn 1 as it was, 6 items); verify says so with rollback/compacted-turn (warning).",
		Owner: "realfiles (rollback/compacted-turn)"},
	"0.107.0/rollback-compacted": rollbackCompactedReplay,
	"0.125.0/rollback-compacted": rollbackCompactedReplay,
	"0.139.0/rollback-compacted": rollbackCompactedReplay,
	"0.142.5/rollback-compacted": rollbackCompactedReplay,
	"0.144.6/rollback-compacted": rollbackCompactedReplay,
	"0.145.0/rollback-compacted": rollbackCompactedReplay,
	"0.147.0/rollback-compacted": rollbackCompactedReplay,
	"0.160.1/corrupt/invalid-utf8": {Why: "Codex 0.160.1 resumed the damaged turns3 (a 0xff in the first assistant message) from the session's own directory and dropped that line: 17 items, the message gone. 0.148.0 to 0.153.4, 0.165.0 and 0.171.0 refuse the same damage (\"list_turns is not supported yet\"), 0.147.0 and older too (\"stream did not contain valid UTF-8\"); 0.171.0 was seen dropping the line when resumed from another directory. rollout state keeps the line (18 items); verify reports line/invalid-utf8 (error) and repair's result resumes.",
		Owner: "engine (line/invalid-utf8)"},
}

// rollbackCompactedReplay: openai/codex#32851, seen with every golden
// version from 0.107.0 (the reverse replay) to 0.147.0; 0.148.0 and later
// refuse thread/rollback on their paginated threads.
var rollbackCompactedReplay = Difference{Why: "Codex resumes a thread whose rolled-back turn compacted with the one item that followed that compaction (the turn's last answer) and nothing before it: the reverse replay of Session::reconstruct_history_from_rollout takes the rejected compaction's suffix (openai/codex#32851). rollout state follows the rollback (turn 1 as it was); verify reports what Codex does with rollback/compacted-turn (error).",
	Owner: "realfiles (rollback/compacted-turn)"}
