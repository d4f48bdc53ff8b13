package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Context handoffs (handoffs.md): judged on the latest record of each id.
var handoffRules = []*Rule{
	on(Rule{ID: "handoff/oversized-not-deferred", Severity: Error, Since: "0.1.0",
		Title: "a ready handoff larger than the budget at its target turn, not deferred",
		Doc:   "The budget at a turn is max(0, min(cap, 64000, W - F - P - max(16000, ceil(W/4)))) from the window W and fill F of the latest token_count before the turn and the prompt P. A ready handoff without delivery that exceeds it fails its turn and every later one (\"Insufficient context allowance for the provider handoff\"): the thread is wedged although the provider could take the prompt. Deferring it sends the prompt unchanged and retries the handoff on later turns.",
		Fix:   "set \"deferred\":true on the handoff's latest record",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.HandoffOversizedEvidence) string {
			if e.DuplicateOf != "" {
				// An older copy of the same handoff is kept (and deferred):
				// deferring this one too would only make a duplicate.
				return fixHandoff(p, f, e.ID, setSuperseded)
			}
			return fixHandoff(p, f, e.ID, setDeferredTrue)
		}),
	}, func(e reconstruct.HandoffOversizedEvidence) string {
		return oversizedMessage(e)
	}),
	on(Rule{ID: "handoff/lost-deferred", Severity: Error, Since: "0.1.0",
		Title: "a deferred handoff lost its marker while its delivery is pending",
		Doc:   "A pending delivery is uncertain: it was written before sending. If the handoff was deferred and its latest record drops the marker while the delivery is still pending after its turn ended, nothing retries it and its history is silently lost.",
		Fix:   "restore \"deferred\":true on the handoff's latest record",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.HandoffLostDeferredEvidence) string {
			return fixHandoff(p, f, e.ID, setDeferredTrue)
		}),
	}, func(e reconstruct.HandoffLostDeferredEvidence) string {
		return fmt.Sprintf("handoff %v (%d tokens) lost its deferred marker (last set on line %d) while its delivery is pending "+
			"and turn %v has ended (%v): it would be silently dropped; restore deferred",
			e.ID, e.Tokens, e.DeferredLine, e.DeliveryTurnID, e.TurnStatus)
	}),
	on(Rule{ID: "handoff/stale-deferred", Severity: Warning, Since: "0.1.0",
		Title: "a handoff still deferred after a confirmed delivery",
		Doc:   "A confirmed delivery (injected or inline) clears the deferred marker. A marker left behind makes the orchestrator deliver the same history again on a later turn.",
		Fix:   "remove \"deferred\" from the handoff's latest record",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.HandoffStaleDeferredEvidence) string {
			return fixHandoff(p, f, e.ID, removeDeferred)
		}),
	}, func(e reconstruct.HandoffStaleDeferredEvidence) string {
		return fmt.Sprintf("handoff %v (%d tokens) is still deferred although its delivery is confirmed (%v): "+
			"the history would be delivered again; clear deferred", e.ID, e.Tokens, e.Delivery)
	}),
	on(Rule{ID: "handoff/duplicate-deferred", Severity: Warning, Since: "0.1.0",
		Title: "two deferred ready handoffs for one provider thread covering the same items",
		Doc:   "Missed-run recovery must reuse a deferred handoff, not create another. Duplicates deliver the same history twice once they fit. The oldest handoff is kept.",
		Fix:   "mark the later duplicates \"status\":\"superseded\"",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.HandoffDuplicateDeferredEvidence) string {
			return fixHandoff(p, f, e.ID, setSuperseded)
		}),
	}, func(e reconstruct.HandoffDuplicateDeferredEvidence) string {
		return fmt.Sprintf("handoff %v duplicates deferred handoff %v (first written on line %d): both cover the same %d items "+
			"for provider thread %v; mark %v superseded", e.ID, e.KeptID, e.KeptLine, e.Items, e.ProviderThreadID, e.ID)
	}),
	on(Rule{ID: "handoff/double-delivery", Severity: Error, Since: "0.1.0",
		Title: "a handoff delivered twice",
		Doc:   "A handoff is delivered at most once. A second confirmed delivery (another record whose confirmed delivery differs from the one before it) put the same history into the provider's context twice. Look at the orchestrator's retry logic; the rollout cannot be repaired after the fact.",
	}, func(e reconstruct.HandoffDoubleDeliveryEvidence) string {
		return fmt.Sprintf("handoff %v delivered again (%v) after its confirmed delivery (%v) on line %d: "+
			"a handoff is delivered at most once (%d confirmed deliveries)",
			e.ID, e.Delivery, e.FirstDelivery, e.FirstLine, e.Deliveries)
	}),
	on(Rule{ID: "handoff/bad-items", Severity: Error, Since: "0.1.0",
		Title: "handoff item lists overlap or name items not in the rollout",
		Doc:   "history.item_ids and history.omitted_item_ids must be disjoint, and every id must name a response item of this rollout (live, or in a compaction's replacement history). Otherwise the handoff was built from another thread's history or a corrupted selection.",
	}, func(e reconstruct.HandoffBadItemsEvidence) string {
		return badItemsMessage(e)
	}),
	on(Rule{ID: "handoff/abandoned", Severity: Info, Since: "0.1.0",
		Title: "a deferred handoff whose provider thread has no turn after its target turn",
		Doc:   "Deferral is scoped to one provider thread: a deferred handoff is only retried on later turns of the thread it targets. When the thread is not used again (the conversation moved to another provider thread, or the file ends there) the history is never delivered. Reported, not changed.",
	}, func(e reconstruct.HandoffAbandonedEvidence) string {
		return fmt.Sprintf("handoff %v (%d tokens) is deferred but provider thread %v has no turn after its target turn %v (line %d): "+
			"it is retried only if that thread is used again", e.ID, e.Tokens, e.ProviderThreadID, e.TurnID, e.TurnLine)
	}),
}

func oversizedMessage(e reconstruct.HandoffOversizedEvidence) string {
	at := fmt.Sprintf("at turn %v", e.TurnID)
	if e.AtEOF {
		at = "at the end of the file"
		if e.TurnID != "" {
			at = fmt.Sprintf("at the end of the file (target turn %v is not in the rollout)", e.TurnID)
		}
	}
	fix := "set deferred"
	if e.DuplicateOf != "" {
		fix = fmt.Sprintf("it copies %v, which is kept: mark this one superseded", e.DuplicateOf)
	}
	return fmt.Sprintf("handoff %v needs %d tokens but the budget %s is %d (window %d, fill %d, prompt %d, reserve %d, cap %d): "+
		"it would wedge the thread; %s",
		e.ID, e.Tokens, at, e.Budget, e.Window, e.Fill, e.Prompt, e.Reserve, e.Cap, fix)
}

func badItemsMessage(e reconstruct.HandoffBadItemsEvidence) string {
	var parts []string
	if e.OverlapCount > 0 {
		parts = append(parts, fmt.Sprintf("%d item ids in both item_ids and omitted_item_ids (%s)", e.OverlapCount, listIDs(e.Overlap, e.OverlapCount)))
	}
	if e.UnknownCount > 0 {
		parts = append(parts, fmt.Sprintf("%d item ids that name no item of this rollout (%s)", e.UnknownCount, listIDs(e.Unknown, e.UnknownCount)))
	}
	return fmt.Sprintf("handoff %v has %s", e.ID, strings.Join(parts, " and "))
}

// listIDs joins the listed ids, saying how many more there are.
func listIDs(ids []string, n int) string {
	s := strings.Join(ids, ", ")
	if more := n - len(ids); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
