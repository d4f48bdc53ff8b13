package checks

import (
	"slices"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

// TestEveryKindHasAConsumer: an observation kind that no rule consumes
// would be dropped silently, and a rule that consumes no kind never fires.
// Flow kinds are for other observers (budget evidence, fix facts), never
// for rules.
func TestEveryKindHasAConsumer(t *testing.T) {
	consumers := map[reconstruct.Kind][]string{}
	for _, r := range registry {
		if len(r.Kinds) == 0 {
			t.Errorf("%s consumes no observation kind", r.ID)
		}
		if r.message == nil || r.evidence == nil {
			t.Errorf("%s: no message or evidence type (declare it with on)", r.ID)
		}
		for _, k := range r.Kinds {
			consumers[k] = append(consumers[k], r.ID)
		}
	}
	for _, k := range reconstruct.Kinds() {
		flow := slices.Contains(reconstruct.FlowKinds, k)
		switch n := len(consumers[k]); {
		case flow && n > 0:
			t.Errorf("flow kind %d is consumed by rules %v", k, consumers[k])
		case !flow && n == 0:
			t.Errorf("observation kind %d has no rule: its observations would be dropped", k)
		case n > 1:
			t.Errorf("observation kind %d is consumed by %v", k, consumers[k])
		}
	}
}

// TestEvidenceTagged: every field of every rule's evidence has a JSON
// name, so the public evidence object is spelled out in one place.
func TestEvidenceTagged(t *testing.T) {
	for _, r := range registry {
		for i := 0; i < r.evidence.NumField(); i++ {
			f := r.evidence.Field(i)
			if tag := f.Tag.Get("json"); tag == "" || tag == "-" {
				t.Errorf("%s: evidence field %s.%s has no JSON name", r.ID, r.evidence.Name(), f.Name)
			}
		}
	}
}
