package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
)

// handoffKinds maps the handoff observations (handoffs.md rules 1-7) to
// their rules. It joins byKind at init so check.go stays untouched by the
// handoff area.
var handoffKinds = map[reconstruct.Kind]mapping{
	reconstruct.HandoffOversized:         {"handoff/oversized-not-deferred", msgOversized},
	reconstruct.HandoffLostDeferred:      {"handoff/lost-deferred", msgLostDeferred},
	reconstruct.HandoffStaleDeferred:     {"handoff/stale-deferred", msgStaleDeferred},
	reconstruct.HandoffDuplicateDeferred: {"handoff/duplicate-deferred", msgDuplicateDeferred},
	reconstruct.HandoffDoubleDelivery:    {"handoff/double-delivery", msgDoubleDelivery},
	reconstruct.HandoffBadItems:          {"handoff/bad-items", msgBadItems},
	reconstruct.HandoffAbandoned:         {"handoff/abandoned", msgAbandoned},
}

func init() {
	for k, m := range handoffKinds {
		if _, dup := byKind[k]; dup {
			panic(fmt.Sprintf("observation kind %d mapped twice", k))
		}
		byKind[k] = m
	}
}

func msgOversized(f map[string]any) string {
	at := fmt.Sprintf("at turn %v", f["turn_id"])
	if f["at_eof"] == true {
		at = "at the end of the file"
		if f["turn_id"] != "" {
			at = fmt.Sprintf("at the end of the file (target turn %v is not in the rollout)", f["turn_id"])
		}
	}
	fix := "set deferred"
	if kept, ok := f["duplicate_of"]; ok {
		fix = fmt.Sprintf("it copies %v, which is kept: mark this one superseded", kept)
	}
	return fmt.Sprintf("handoff %v needs %v tokens but the budget %s is %v (window %v, fill %v, prompt %v, reserve %v, cap %v): "+
		"it would wedge the thread; %s",
		f["id"], f["tokens"], at, f["budget"], f["window"], f["fill"], f["prompt"], f["reserve"], f["cap"], fix)
}

func msgLostDeferred(f map[string]any) string {
	return fmt.Sprintf("handoff %v (%v tokens) lost its deferred marker (last set on line %v) while its delivery is pending "+
		"and turn %v has ended (%v): it would be silently dropped; restore deferred",
		f["id"], f["tokens"], f["deferred_line"], f["delivery_turn_id"], f["turn_status"])
}

func msgStaleDeferred(f map[string]any) string {
	return fmt.Sprintf("handoff %v (%v tokens) is still deferred although its delivery is confirmed (%v): "+
		"the history would be delivered again; clear deferred", f["id"], f["tokens"], f["delivery"])
}

func msgDuplicateDeferred(f map[string]any) string {
	return fmt.Sprintf("handoff %v duplicates deferred handoff %v (first written on line %v): both cover the same %v items "+
		"for provider thread %v; mark %v superseded", f["id"], f["kept_id"], f["kept_line"], f["items"], f["provider_thread_id"], f["id"])
}

func msgDoubleDelivery(f map[string]any) string {
	return fmt.Sprintf("handoff %v delivered again (%v) after its confirmed delivery (%v) on line %v: "+
		"a handoff is delivered at most once (%v confirmed deliveries)",
		f["id"], f["delivery"], f["first_delivery"], f["first_line"], f["deliveries"])
}

func msgBadItems(f map[string]any) string {
	var parts []string
	if n, _ := f["overlap_count"].(int); n > 0 {
		parts = append(parts, fmt.Sprintf("%d item ids in both item_ids and omitted_item_ids (%s)", n, listIDs(f["overlap"], n)))
	}
	if n, _ := f["unknown_count"].(int); n > 0 {
		parts = append(parts, fmt.Sprintf("%d item ids that name no item of this rollout (%s)", n, listIDs(f["unknown"], n)))
	}
	return fmt.Sprintf("handoff %v has %s", f["id"], strings.Join(parts, " and "))
}

// listIDs joins the listed ids, saying how many more there are.
func listIDs(v any, n int) string {
	ids, _ := v.([]string)
	s := strings.Join(ids, ", ")
	if more := n - len(ids); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func msgAbandoned(f map[string]any) string {
	return fmt.Sprintf("handoff %v (%v tokens) is deferred but provider thread %v has no turn after its target turn %v (line %v): "+
		"it is retried only if that thread is used again", f["id"], f["tokens"], f["provider_thread_id"], f["turn_id"], f["turn_line"])
}
