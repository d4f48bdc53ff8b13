package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Token usage.
var tokensRules = []*Rule{
	on(Rule{ID: "tokens/total-decreased", Severity: Warning, Since: "0.1.0",
		Title: "the thread's cumulative token counter goes down",
		Doc: "The thread's cumulative usage never decreases except across a rollback or a fork's replay; a decrease means lines from two threads were mixed. Which counter is cumulative depends on the version that wrote the file. " +
			"Up to 0.149 it is token_count's info.total_token_usage (TokenUsageInfo, codex-rs/protocol/src/protocol.rs at rust-v0.147.0). Later versions also write a token_usage_record per completed response (TokenUsageRecord: usage for the response, turn_token_usage cumulative within the turn, thread_token_usage cumulative within the thread; it is not in rust-v0.149.0-alpha.3), and 0.153.4 writes the turn's usage in token_count's total_token_usage, restarting each turn while thread_token_usage keeps growing. " +
			"So in a file that carries token_usage_record lines their thread_token_usage is judged and token_count totals are not; in older files token_count's total_token_usage is.",
	}, func(e reconstruct.TokensTotalDecreasedEvidence) string {
		if e.Counter == "thread_token_usage" {
			return fmt.Sprintf("token_usage_record thread_token_usage fell from %d to %d total tokens: lines of two threads were mixed?", e.Previous, e.Got)
		}
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
