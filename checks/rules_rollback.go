package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Rollbacks.
var rollbackRules = []*Rule{
	on(Rule{ID: "rollback/too-many-turns", Severity: Warning, Since: "0.1.0",
		Title: "thread_rolled_back drops more user turns than exist",
		Doc: "Codex does not fail: ContextManager::drop_last_n_user_turns (codex-rs/core/src/context_manager/history.rs) drops every user turn and keeps what came before the first user message (the session prefix); with no user turn at all it changes nothing. The rollback was written against a different history (a fork, or a truncated or edited file), so the thread resumes with less than the user saw. " +
			"User turns are counted the way Codex counts them: from task_started events where the file has them, and otherwise (Codex before about 0.104 persisted no task_started) from the user messages of the history, skipping the contextual ones Codex writes itself (<environment_context>, AGENTS.md and user instructions, skills, shell commands, abort markers).",
	}, func(e reconstruct.RollbackTooManyEvidence) string {
		if e.Available == 0 {
			return fmt.Sprintf("rollback of %d user turns, but there is no user turn: Codex changes nothing", e.Requested)
		}
		return fmt.Sprintf("rollback of %d user turns, but only %d exist: Codex drops all %d and keeps what came before the first", e.Requested, e.Available, e.Available)
	}),
	on(Rule{ID: "rollback/compacted-turn", Severity: Error, Since: "0.3.0",
		Title: "a rollback drops a turn that compacted, and no later compaction replaces the history: Codex 0.107+ replays the dropped turn on resume (warning when a compaction before it survives, or before 0.107)",
		Doc: "Since rust-v0.107.0 resume rebuilds the history in Session::reconstruct_history_from_rollout (codex-rs/core/src/session/rollout_reconstruction.rs; openai/codex#12612, 695957a348): it scans back to the newest surviving compaction with a replacement_history and replays what follows it. The scan takes a compaction's suffix as the one to replay as soon as it meets it, before it learns that the turn holding it is rolled back, and rejecting the turn later does not undo that choice (openai/codex#32851, open; the same code at rust-v0.147.0 and on alpha at 8ee2217e79). Codex counts a compaction made after a turn, before the next task_started, in that turn. " +
			"After a rollback of a turn that compacted, and with no compaction after the rollback (which would start the history afresh), the next resume rebuilds: without an earlier compaction, the rolled-back turn's items after its compaction and nothing before it, so the model gets a discarded answer and loses every turn the user kept (error); with an earlier one, the replay passes through the dropped compaction and cuts back at its user messages, so the surviving turns come back only in that compaction's compacted form, its summary covering the discarded work (warning). " +
			"Before 0.107 a forward replay applied the compaction and then the rollback, with the second outcome (warning). " +
			"A compaction without replacement_history (what Codex before 0.107 writes; counted only in a file of such a version) is rebuilt in its legacy form, the context, every user prompt and the summary as a user message, and the rollback then counts the summary as the newest user turn: the summary is lost and the oldest rolled-back prompt comes back (warning). " +
			"The conformance goldens rollback-compacted (codex app-server thread/rollback, then a resume) show both: Codex 0.125.0 and 0.147.0 resumed with the one item after the rolled-back turn's compaction (its last answer) and nothing before; Codex 0.104.0 with the context, both prompts and no summary. " +
			"rollout's state follows the rollback, not Codex's rebuild (docs/codex-replay.md lists the difference). Nothing in the file is to fix: start a new thread, or fork from a turn before the compaction.",
		context: severityBy(func(e reconstruct.RollbackCompactedTurnEvidence, _ *reconstruct.State) Severity {
			if e.Legacy || e.EarlierCompaction || (e.ReplaysDropped != nil && !*e.ReplaysDropped) {
				return Warning
			}
			return Error
		}),
	}, func(e reconstruct.RollbackCompactedTurnEvidence) string {
		what := fmt.Sprintf("rollback of %d user turns drops the turn on line %d, which compacted on line %d", e.NumTurns, e.TurnLine, e.CompactionLine)
		if e.Legacy {
			return what + " without a replacement_history: on resume Codex rebuilds that compaction's form and counts its summary as the newest user turn, so the summary is lost and the oldest rolled-back prompt comes back"
		}
		if e.EarlierCompaction || (e.ReplaysDropped != nil && !*e.ReplaysDropped) {
			return what + ": on resume Codex keeps the surviving turns only in that compaction's compacted form, summary of the discarded work included"
		}
		return what + ": Codex 0.107 and later resume with the rolled-back turn's items after that compaction and nothing before it (openai/codex#32851)"
	}),
}
