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
		Title: "a turn whose prompt event has no user message item (warning when the turn left nothing else in the history)",
		Doc: "Codex writes each prompt twice: a user message response item for the model, and an event for the UI (user_message in legacy mode, item_completed with a UserMessage in paginated mode). Resume rebuilds the model's history from the response items alone: in Session::reconstruct_history_from_rollout (codex-rs/core/src/session/rollout_reconstruction.rs, rust-v0.147.0 04f47de343 and every tag since 0.107) RolloutItem::EventMsg(_) changes nothing, and before that the forward replay skipped events too. A turn whose prompt event has no user input item at all (a user message, or an inter-agent message) therefore resumes without its question. " +
			"The turn is judged by its structure, never by comparing texts: redacted copies write the event and the item differently, and a pasted image puts the image and its tags before the text in the item. In a file without turn events (Codex before 0.100) a turn starts at its user message, so there a prompt event beyond the turn's user messages is the one without its item. A turn later rolled back is not reported: Codex drops it whole. " +
			"Severity follows what Codex then sends: when the turn left other items in the history (answers, tool calls, reasoning) the model receives them without the question and may act on them out of context (error); when it left nothing, nothing of the turn is sent and only the prompt is lost (warning).",
		context: severityBy(func(e reconstruct.PromptMissingFromHistoryEvidence, _ *reconstruct.State) Severity {
			if e.Answered {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.PromptMissingFromHistoryEvidence) string {
		if e.Answered {
			return fmt.Sprintf("prompt %q has no user message item in its turn: on resume the model sees this turn's answers but not the question", e.Prompt)
		}
		return fmt.Sprintf("prompt %q has no user message item in its turn: resume loses the prompt (the turn left nothing else in the history)", e.Prompt)
	}),
	on(Rule{ID: "turn/id-mismatch", Severity: Warning, Since: "0.1.0",
		Title: "a turn's closing event names another turn id",
		Doc:   "Turn segmentation on resume matches ids; a mismatch means events of two turns interleaved.",
	}, func(e reconstruct.TurnIDMismatchEvidence) string {
		return fmt.Sprintf("turn %v is closed by an event for turn %v", e.Started, e.Closed)
	}),
}
