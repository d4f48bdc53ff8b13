package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Token usage.
var tokensRules = []*Rule{
	on(Rule{ID: "tokens/total-decreased", Severity: Warning, Since: "0.1.0",
		Title: "cumulative total_token_usage goes down",
		Doc:   "The thread's cumulative usage never decreases except across a rollback or a fork's replay; a decrease means lines from two threads were mixed.",
	}, func(e reconstruct.TokensTotalDecreasedEvidence) string {
		return fmt.Sprintf("cumulative total_tokens fell from %d to %d", e.Previous, e.Got)
	}),
	on(Rule{ID: "tokens/over-window", Severity: Warning, Since: "0.1.0",
		Title: "last_token_usage.total_tokens exceeds model_context_window",
		Doc:   "The request filled more than the context window: the next request overflows unless the agent compacts.",
	}, func(e reconstruct.TokensOverWindowEvidence) string {
		return fmt.Sprintf("context fill %d exceeds the window of %d", e.Fill, e.Window)
	}),
	on(Rule{ID: "tokens/reemitted", Severity: Info, Since: "0.1.0",
		Title: "duplicate token_count snapshots (counted, not double-counted)",
		Doc:   "Codex re-emits the same token_count; tools that sum every event double-count usage. rollout counts each snapshot once. Reported once per file with the count.",
	}, func(e reconstruct.TokensReemittedEvidence) string {
		return inThisFile("token_count snapshot re-emitted (counted once)", e.Count)
	}),
}
