package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Item ids.
var itemRules = []*Rule{
	on(Rule{ID: "item/missing-id", Severity: Warning, Since: "0.1.0",
		Title: "a response item without id in a file that uses ids (error in paginated files)",
		Doc:   "Once a thread uses item ids, every item should carry one; paginated history requires them. Files from before 2026 have no ids at all: that is normal and not reported.",
		Fix:   "assign <prefix>_<uuidv7>",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemMissingIDEvidence) string {
			return assignID(p, f, e.ItemIndex, rollout.TypeResponseItem)
		}),
		context: severityBy(func(_ reconstruct.ItemMissingIDEvidence, st *reconstruct.State) Severity {
			// Paginated history requires ids.
			if st.HistoryMode == rollout.HistoryPaginated {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.ItemMissingIDEvidence) string {
		return fmt.Sprintf("%v item has no id; expected %v_<uuidv7>", e.ItemType, e.Prefix)
	}),
	on(Rule{ID: "item/id-prefix-mismatch", Severity: Error, Since: "0.1.0",
		Title: "an id prefix that does not match the item type",
		Doc:   "The Responses API rejects it on resume (\"Expected an ID that begins with 'msg'\"), failing every later turn.",
		Fix:   "assign a fresh id with the right prefix",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemPrefixMismatchEvidence) string {
			return replaceID(p, f, e.ID, e.ItemIndex)
		}),
	}, func(e reconstruct.ItemPrefixMismatchEvidence) string {
		return fmt.Sprintf("%v id %v should start with %v_: the API rejects it on resume", e.ItemType, e.ID, e.WantPrefix)
	}),
	on(Rule{ID: "item/duplicate-id", Severity: Error, Since: "0.1.0",
		Title: "two different live items with one id",
		Doc:   "The API rejects a request whose input holds two items with one id. The same item repeated inside a compaction's replacement history is not a duplicate.",
		Fix:   "assign a fresh id to the later item",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemDuplicateIDEvidence) string {
			return replaceID(p, f, e.ID, e.ItemIndex)
		}),
	}, func(e reconstruct.ItemDuplicateIDEvidence) string {
		return fmt.Sprintf("id %v is already used by a different item on line %d", e.ID, e.FirstLine)
	}),
	on(Rule{ID: "item/bad-uuidv7", Severity: Warning, Since: "0.1.0",
		Title: "a locally formed id whose UUID is not a valid version 7",
		Doc:   "Locally assigned ids are <prefix>_<uuidv7>; another version or variant means the id was not made by Codex.",
	}, func(e reconstruct.ItemBadUUIDv7Evidence) string {
		return fmt.Sprintf("id %v: %v", e.ID, e.Reason)
	}),
}
