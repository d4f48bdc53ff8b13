package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Ordinals of paginated history.
var ordinalRules = []*Rule{
	on(Rule{ID: "ordinal/missing", Severity: Error, Since: "0.1.0",
		Title: "a line without ordinal in a paginated file",
		Doc:   "Paginated rollouts number every line. A line without ordinal breaks page boundaries on resume.",
		Fix:   "renumber the ordinals 0..n-1",
		plan:  renumber,
	}, func(reconstruct.OrdinalMissingEvidence) string {
		return "line has no ordinal in a paginated file"
	}),
	on(Rule{ID: "ordinal/last-missing", Severity: Error, Since: "0.1.0",
		Title: "the last line has no ordinal: resume fails",
		Doc:   "On resume Codex reads the last line's ordinal to continue numbering. Without it, resume fails outright.",
		Fix:   "renumber the ordinals 0..n-1",
		plan:  renumber,
	}, func(reconstruct.OrdinalLastMissingEvidence) string {
		return "last line has no ordinal: resume fails"
	}),
	on(Rule{ID: "ordinal/duplicate", Severity: Error, Since: "0.1.0",
		Title: "an ordinal used twice",
		Doc:   "Two lines claim the same position; paginated resume keeps one of them and drops the other.",
		Fix:   "renumber the ordinals 0..n-1",
		plan:  renumber,
	}, func(e reconstruct.OrdinalDuplicateEvidence) string {
		return fmt.Sprintf("ordinal %d used twice", e.Ordinal)
	}),
	on(Rule{ID: "ordinal/gap", Severity: Warning, Since: "0.1.0",
		Title: "ordinals skip values",
		Doc:   "Ordinals should grow by 1 from 0. A gap usually means lines were removed by hand; pages around it are shorter than expected.",
		Fix:   "renumber the ordinals 0..n-1",
		plan:  renumber,
	}, func(e reconstruct.OrdinalGapEvidence) string {
		return fmt.Sprintf("ordinal %d where %d was expected", e.Got, e.Want)
	}),
	on(Rule{ID: "ordinal/non-monotonic", Severity: Error, Since: "0.1.0",
		Title: "ordinals go backwards",
		Doc:   "Lines out of order (two writers, or a bad merge): paginated resume replays them in the wrong order.",
		Fix:   "renumber the ordinals 0..n-1",
		plan:  renumber,
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
