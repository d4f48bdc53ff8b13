package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// World-state snapshots and merge patches.
var worldstateRules = []*Rule{
	on(Rule{ID: "worldstate/patch-without-baseline", Severity: Warning, Since: "0.1.0",
		Title: "a world-state patch before any snapshot, or after a compaction before a new snapshot (error after a compaction)",
		Doc: "A patch applies to a baseline. Without one Codex has no world state to resume from: 0.144.6 to 0.171 resume a turns3 golden whose first snapshot was written as a patch (full false), send the same history, send the full context again and write a new full snapshot (measured with the conformance harness, internal/testkit/conformance/testdata/*/corrupt/worldstate-first-patch.json), so nothing is lost but the patch (warning). " +
			"Versions before 0.143 do not read world_state records at all (reads-world-state in the quirks table): info. A patch after a compaction, before a new snapshot, is not measured and stays an error: the patch would apply to the world state the compaction replaced.",
		context: severityBy(func(e reconstruct.WorldStatePatchWithoutBaselineEvidence, st *reconstruct.State) Severity {
			if e.AfterCompaction {
				return Error
			}
			if st != nil {
				if reads, ok := reconstruct.Has(reconstruct.QuirkReadsWorldState, st.CLIVersion); ok && !reads {
					return Info
				}
			}
			return Warning
		}),
	}, func(e reconstruct.WorldStatePatchWithoutBaselineEvidence) string {
		if e.AfterCompaction {
			return "world-state patch after a compaction, before a new full snapshot"
		}
		return "world-state patch before any full snapshot: Codex resumes, sends the full context again and writes a new snapshot; the patch is lost"
	}),
	on(Rule{ID: "worldstate/not-object", Severity: Error, Since: "0.1.0",
		Title: "world_state.state is not a JSON object",
		Doc:   "Snapshots and merge patches are objects; anything else cannot be replayed.",
	}, func(e reconstruct.WorldStateNotObjectEvidence) string {
		return "world_state.state is not a JSON object"
	}),
	on(Rule{ID: "worldstate/empty-patch", Severity: Warning, Since: "0.1.0",
		Title: "a world-state patch that changes nothing",
		Doc:   "Codex writes only non-empty patches; an empty one suggests a duplicated or hand-edited line.",
		Fix:   "drop the line (to FILE.quarantine.jsonl)", OptIn: true,
		plan: dropEmptyPatch,
	}, func(reconstruct.WorldStateEmptyPatchEvidence) string {
		return "world-state patch changes nothing"
	}),
	on(Rule{ID: "worldstate/null-in-snapshot", Severity: Info, Since: "0.1.0",
		Title: "a null inside a section of a full world-state snapshot",
		Doc: "Codex persists the model-visible world state as WorldStateItem {full, state} (codex-rs/protocol/src/protocol.rs, rust-v0.147.0), one member per section (agents_md, apps_instructions, environments, git_attribution, host_skills, model, multi_agent_mode, permissions, personality, skills, ...). " +
			"Its writer at rust-v0.147.0 (codex-rs/core/src/context/world_state/mod.rs, WorldState::snapshot and remove_null_object_fields) leaves out a section whose snapshot is null and strips null object fields inside sections; nulls are written only in patches, for removed keys. Top-level null sections were reported in real 0.146-0.147 snapshots (issue #10, not located) and are harmless: not reported. " +
			"A null inside a section is not written by that code and is ambiguous once patches are replayed (an RFC 7386 patch cannot set a member to null, only delete it), so it is reported for a look, as info. Nulls inside arrays are fine.",
	}, func(e reconstruct.WorldStateNullInSnapshotEvidence) string {
		return fmt.Sprintf("null object fields in a full snapshot: %v", e.Paths)
	}),
	on(Rule{ID: "worldstate/duplicate-key", Severity: Warning, Since: "0.1.0",
		Title: "a world-state snapshot or patch that repeats a key in one object",
		Doc:   "JSON readers disagree on repeated keys: gjson keeps the first value, Codex's serde and encoding/json the last. The merge keeps the last, as Codex does; the file should be checked by hand. rollout never picks one silently.",
	}, func(e reconstruct.WorldStateDuplicateKeyEvidence) string {
		return fmt.Sprintf("world state repeats keys %v (%d in all): readers disagree on which value wins", e.Keys, e.Count)
	}),
	on(Rule{ID: "worldstate/order", Severity: Warning, Since: "0.1.0",
		Title: "a world-state patch not preceded by model-visible history in its step",
		Doc:   "Codex writes the history line first and its world_state patch after it. A patch with no history since the previous world_state line is out of order.",
	}, func(reconstruct.WorldStateOrderEvidence) string {
		return "world-state patch with no model-visible history since the previous world_state line"
	}),
}

// dropEmptyPatch removes a world-state patch that changes nothing.
func dropEmptyPatch(p *planner, f Finding) string {
	if p.concat[f.Line] {
		return "the line holds several objects: which one is empty is not known"
	}
	p.addLineEdit(f.Line, "drop", rollout.EditDrop, f.Rule)
	return ""
}
