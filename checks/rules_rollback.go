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
}
