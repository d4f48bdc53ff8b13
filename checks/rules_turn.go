package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Turn segmentation.
var turnRules = []*Rule{
	on(Rule{ID: "turn/unclosed", Severity: Warning, Since: "0.1.0",
		Title: "task_started with no task_complete or turn_aborted before the next turn (info at end of file)",
		Doc:   "The turn was interrupted without its closing event. At the end of the file the turn may simply be in progress.",
		context: severityBy(func(e reconstruct.TurnUnclosedEvidence, _ *reconstruct.State) Severity {
			// At the end of the file the turn may be in progress.
			if e.AtEOF {
				return Info
			}
			return Warning
		}),
	}, func(e reconstruct.TurnUnclosedEvidence) string {
		if e.AtEOF {
			return fmt.Sprintf("turn %v has not ended by the end of the file (in progress?)", e.TurnID)
		}
		return fmt.Sprintf("turn %v never ended before the next turn started", e.TurnID)
	}),
	on(Rule{ID: "turn/prompt-not-in-history", Severity: Error, Since: "0.2.0",
		Title: "a user_message event whose user message is not in the model history",
		Doc: "In legacy history mode Codex persists each prompt twice: a user_message event for the UI and a user message response item for the model. A resume rebuilds the model's history from the response items only (the rollout reconstruction in codex-rs/core/src/session, ContextManager::record_items), so a prompt whose item is missing is gone for the model: it resumes with the answers and tool calls of that turn but not the question, and may act on them out of context. " +
			"The two are paired within a turn by the first 64 bytes of the text; an image-only prompt is not judged. Paginated files persist no user_message events and are never reported.",
	}, func(e reconstruct.PromptMissingFromHistoryEvidence) string {
		return fmt.Sprintf("user_message %q has no user message in the model history: on resume the model sees this turn's answers but not the question", e.Prompt)
	}),
	on(Rule{ID: "turn/id-mismatch", Severity: Warning, Since: "0.1.0",
		Title: "a turn's closing event names another turn id",
		Doc:   "Turn segmentation on resume matches ids; a mismatch means events of two turns interleaved.",
	}, func(e reconstruct.TurnIDMismatchEvidence) string {
		return fmt.Sprintf("turn %v is closed by an event for turn %v", e.Started, e.Closed)
	}),
}
