package repair

import (
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
)

// What Codex 0.171 will allocate next, as far as a rollout records it
// (reconstruct/records171.go; both modelled from the binary, unverified):
//
//   - resume_metadata.next_item_ordinal of a compaction checkpoint: the
//     ordinal of the first record it does not cover (the record after it,
//     or, for an async compaction, an earlier one). A renumbering that
//     changes the ordinal of a record from that one to the record after
//     the checkpoint would leave the checkpoint naming another record:
//     refused, as is a result with more ordinal/next-item findings.
//   - id_allocation: the state of Codex's item id allocator, whose shape
//     is not known. An id repair derives could be one Codex allocates
//     next, so a repair that assigns ids in such a file is refused.

// nextItemRule is the rule of a record numbered off its checkpoint's
// next_item_ordinal.
const nextItemRule = "ordinal/next-item"

// allocationRefusal refuses a result that would collide with what Codex
// allocates next: more ordinal/next-item findings than the input had (of
// any severity: the rule is a warning, which guard does not count), or
// item ids assigned in a file with an id_allocation record.
func (t *Txn) allocationRefusal() *inplace.Refusal {
	if t.Output == nil {
		return nil
	}
	if r := t.renumberedCheckpoint(); r != nil {
		return r
	}
	before, after := countRule(t.Input.Findings, nextItemRule), countRule(t.Output.Findings, nextItemRule)
	if after > before {
		return inplace.Refuse(inplace.Worse, t.Path,
			"the renumbering would move %d records after a compaction checkpoint off its next_item_ordinal (%s): Codex would give out their ordinals again",
			after-before, nextItemRule)
	}
	if st := t.Input.State; st != nil && st.IDAllocation != nil {
		if n := t.assignedIDs(); n > 0 {
			return inplace.Refuse(inplace.Worse, t.Path,
				"the file holds Codex's item id allocator state (id_allocation, line %d), which rollout cannot read: the %d ids repair would derive might be ones Codex allocates next; fix the items by hand or leave them (select other fixes with --fix)",
				st.IDAllocation.Line, n)
		}
	}
	return nil
}

// renumberedCheckpoint refuses a renumbering that changes the ordinal of
// a record a checkpoint's next_item_ordinal names or covers: input
// ordinals from Next to the checkpoint's own + 1, on lines up to the one
// after the checkpoint.
func (t *Txn) renumberedCheckpoint() *inplace.Refusal {
	st := t.Input.State
	if st == nil || len(st.NextItemCheckpoints) == 0 || t.Changes == nil {
		return nil
	}
	for _, c := range t.Changes.All {
		if c.Member != "ordinal" || !c.HadBefore {
			continue
		}
		old, err := strconv.ParseInt(string(c.Before), 10, 64)
		if err != nil {
			continue
		}
		for _, k := range st.NextItemCheckpoints {
			if c.Line <= k.Line+1 && old >= k.Next && old <= k.Ordinal+1 {
				return inplace.Refuse(inplace.Worse, t.Path,
					"the renumbering would change ordinal %d (line %d), which the compaction on line %d names through next_item_ordinal %d: Codex would resume from that checkpoint at another record; renumber by hand, or leave the ordinals (select other fixes with --fix)",
					old, c.Line, k.Line, k.Next)
			}
		}
	}
	return nil
}

// assignedIDs counts the changes that set an item id.
func (t *Txn) assignedIDs() int {
	if t.Changes == nil {
		return 0
	}
	n := 0
	for _, c := range t.Changes.All {
		if c.Member == "id" || strings.HasSuffix(c.Member, ".id") {
			n++
		}
	}
	return n
}

func countRule(fs []checks.Finding, rule string) int {
	n := 0
	for _, f := range fs {
		if f.Rule == rule {
			n++
		}
	}
	return n
}
