package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Compactions and the context-window lineage.
var compactionRules = []*Rule{
	on(Rule{ID: "compaction/legacy", Severity: Warning, Since: "0.1.0",
		Title: "compacted without replacement_history",
		Doc:   "The newest Codex refuses to resume from a legacy compaction (\"needs compaction\"); older versions rebuild the history from user messages and the summary.",
	}, func(reconstruct.CompactionLegacyEvidence) string {
		return "compaction without replacement_history: newest Codex cannot resume from it"
	}),
	on(Rule{ID: "compaction/empty-history", Severity: Error, Since: "0.2.0",
		Title: "a compaction whose replacement_history is empty",
		Doc:   "On resume Codex takes a compaction's replacement_history as the whole new history (replace_compacted_history, codex-rs/core/src/session; the summary lives only inside it, as the user message that build_compacted_history in codex-rs/core/src/compact.rs adds). An empty array after a thread with history resumes with nothing: no question, no summary, no tool results. Codex's own writers never produce it; a failed remote compaction or an editing tool did. Only the newest compaction is judged: resume starts from it, so an empty one that a later compaction supersedes is never read (rollout reclaim --policy superseded-checkpoints empties those on purpose). The history before the compaction is still in the file: fork the thread from before the compaction line, or rebuild replacement_history from it.",
	}, func(e reconstruct.CompactionEmptyHistoryEvidence) string {
		return fmt.Sprintf("replacement_history is empty (the history had %d items): the thread resumes with nothing, not even the summary", e.ItemsBefore)
	}),
	on(Rule{ID: "compaction/lost-prompt", Severity: Warning, Since: "0.2.0",
		Title: "a compaction whose replacement_history drops the last user message",
		Doc:   "Codex's compactions keep the user messages (build_compacted_history in codex-rs/core/src/compact.rs keeps the most recent ones in full; remote compaction keeps the real user messages next to the opaque compaction item: should_keep_compacted_history_item in codex-rs/core/src/compact_remote.rs). A replacement_history without the latest user message of the history it replaces resumes without the request the thread was working on: the model continues from a summary that may not say what was asked. Newer compactions may carry context apart from the history (retained_context, checkpoint); a prompt found there is not lost and not reported. guardian_history is the reviewer's history, not the model's, and is not read.",
	}, func(e reconstruct.CompactionLostPromptEvidence) string {
		return fmt.Sprintf("replacement_history (%d items) drops the last user message %q: the thread resumes without the request it was working on", e.Items, e.Prompt)
	}),
	on(Rule{ID: "compaction/metadata-length", Severity: Error, Since: "0.1.0",
		Title: "replacement_history_metadata length differs from replacement_history",
		Doc:   "The two arrays are parallel; a length mismatch makes resume attach metadata to the wrong items or fail.",
	}, func(e reconstruct.CompactionMetadataLengthEvidence) string {
		return fmt.Sprintf("replacement_history has %d items but replacement_history_metadata has %d", e.History, e.Metadata)
	}),
	on(Rule{ID: "compaction/window-number", Severity: Error, Since: "0.1.0",
		Title: "window_number does not grow by 1",
		Doc:   "Each compaction starts the next context window; a skipped or repeated number means a compaction was lost or duplicated.",
	}, func(e reconstruct.CompactionWindowNumberEvidence) string {
		return fmt.Sprintf("window_number %d where %d was expected", e.Got, e.Want)
	}),
	on(Rule{ID: "compaction/window-lineage", Severity: Error, Since: "0.1.0",
		Title: "first_window_id changes, or previous_window_id is not the prior window id",
		Doc:   "The window chain links every context window to the one before it; a break means lines from another thread or a lost compaction.",
	}, func(e reconstruct.CompactionWindowLineageEvidence) string {
		return fmt.Sprintf("%v is %v, expected %v", e.Field, e.Got, e.Want)
	}),
	on(Rule{ID: "compaction/window-id", Severity: Warning, Since: "0.1.0",
		Title: "a window id that is not a UUIDv7 (numeric legacy form: info)",
		Doc:   "Window ids are UUIDv7. An older writer stored the numeric window number instead: that is reported as info. Newest Codex parses other ids to none.",
		context: severityBy(func(e reconstruct.CompactionWindowIDEvidence, _ *reconstruct.State) Severity {
			// The numeric form is an older writer's, not damage.
			if e.Numeric {
				return Info
			}
			return Warning
		}),
	}, func(e reconstruct.CompactionWindowIDEvidence) string {
		if e.Numeric {
			return fmt.Sprintf("%v is the numeric legacy form %v", e.Field, e.Value)
		}
		return fmt.Sprintf("%v %v is not a UUIDv7", e.Field, e.Value)
	}),
}
