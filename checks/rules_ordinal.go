package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// projectionReads opens the rule docs: the projection is where Codex reads
// ordinals, so it is where a wrong ordinal does harm (docs/repair.md).
const projectionReads = "Codex's SQLite projection of paginated history (thread_history_1.sqlite) reads the file from its cursor and expects each next ordinal (codex-rs/thread-store/src/local/thread_history_materialization.rs, read_projection_steps, rust-v0.147.0)"

// Ordinals of paginated history.
var ordinalRules = []*Rule{
	on(Rule{ID: "ordinal/missing", Severity: Error, Since: "0.1.0",
		Title: "a line without ordinal in a paginated file",
		Doc: "Paginated rollouts number every line. " +
			projectionReads + ": up to 0.153.4 a line without ordinal stops the projection there, and the app's views of the thread show nothing after it; later builds skip the line (openai/codex#43182). What the model resumes from does not read ordinals.",
		Fix:  "renumber from this line on, going on from the ordinal before it",
		plan: renumber,
	}, func(reconstruct.OrdinalMissingEvidence) string {
		return "line has no ordinal in a paginated file"
	}),
	on(Rule{ID: "ordinal/last-missing", Severity: Error, Since: "0.1.0",
		Title: "the last line has no ordinal: resume fails",
		Doc:   "To append, Codex reads the ordinal of the last record that parses and numbers on from it; without one, reopening the rollout fails (\"final paginated rollout record … is missing an ordinal\", codex-rs/rollout/src/ordinal.rs, ordinal_state_for_rollout), so the thread cannot be resumed.",
		Fix:   "renumber from this line on, going on from the ordinal before it",
		plan:  renumber,
	}, func(reconstruct.OrdinalLastMissingEvidence) string {
		return "last line has no ordinal: resume fails"
	}),
	on(Rule{ID: "ordinal/duplicate", Severity: Error, Since: "0.1.0",
		Title: "an ordinal used twice",
		Doc: "Two lines claim the same position. " +
			projectionReads + ": up to 0.153.4 it stops at the second one (\"expected ordinal N+1, got N\", openai/codex#41079, #42241) and the app's views of the thread freeze there; later builds skip the second line (#43182). What the model resumes from does not read ordinals.",
		Fix:  "renumber from this line on, going on from the ordinal before it",
		plan: renumber,
	}, func(e reconstruct.OrdinalDuplicateEvidence) string {
		return fmt.Sprintf("ordinal %d used twice", e.Ordinal)
	}),
	on(Rule{ID: "ordinal/gap", Severity: Warning, Since: "0.1.0",
		Title: "ordinals skip values",
		Doc: "Ordinals grow by 1 from 0, or, in a forked or reverted thread, from its session_meta.history_base.end_ordinal_exclusive (RolloutOrdinalState::for_new_rollout, codex-rs/rollout/src/ordinal.rs): a fork continues its prefix file's numbering. A gap usually means lines were removed by hand. " +
			projectionReads + ": up to 0.153.4 a gap that unparseable lines before it do not account for stops the projection there; later builds skip the missing range (openai/codex#43182).",
		Fix:  "renumber from this line on, going on from the ordinal before it",
		plan: renumber,
	}, func(e reconstruct.OrdinalGapEvidence) string {
		return fmt.Sprintf("ordinal %d where %d was expected", e.Got, e.Want)
	}),
	on(Rule{ID: "ordinal/non-monotonic", Severity: Error, Since: "0.1.0",
		Title: "ordinals go backwards",
		Doc: "Lines out of order (two writers, or a bad merge). " +
			projectionReads + ": up to 0.153.4 a lower ordinal stops the projection there (\"expected ordinal N, got M\"); later builds skip that line (openai/codex#43182). The model's history follows the file order, not the ordinals.",
		Fix:  "renumber from this line on, going on from the ordinal before it",
		plan: renumber,
	}, func(e reconstruct.OrdinalBackwardsEvidence) string {
		return fmt.Sprintf("ordinal %d after %d goes backwards", e.Got, e.Previous)
	}),
	on(Rule{ID: "ordinal/in-legacy", Severity: Warning, Since: "0.1.0",
		Title: "ordinals in a legacy-mode file",
		Doc:   "Only paginated files carry ordinals. Their presence in a legacy file suggests lines copied from a paginated rollout. Reported once per file.",
	}, func(e reconstruct.OrdinalInLegacyEvidence) string {
		return inThisFile("ordinals in a legacy-mode file (first occurrence)", e.Count)
	}),
}
