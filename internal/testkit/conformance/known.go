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
	"0.125.0/rollback-compacted": rollbackCompactedReplay,
	"0.147.0/rollback-compacted": rollbackCompactedReplay,
}

// rollbackCompactedReplay: openai/codex#32851, seen with 0.125.0 and 0.147.0.
var rollbackCompactedReplay = Difference{Why: "Codex resumes a thread whose rolled-back turn compacted with the one item that followed that compaction (the turn's last answer) and nothing before it: the reverse replay of Session::reconstruct_history_from_rollout takes the rejected compaction's suffix (openai/codex#32851). rollout state follows the rollback (turn 1 as it was); verify reports what Codex does with rollback/compacted-turn (error).",
	Owner: "realfiles (rollback/compacted-turn)"}
