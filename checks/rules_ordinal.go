package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
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
	on(Rule{ID: "ordinal/unknown-tail", Severity: Warning, Since: "0.3.0",
		Title: "the last records of a paginated file are of a type its Codex version cannot read: the next resume reuses an ordinal",
		Doc: "To append after a resume, Codex takes the next ordinal from the last record it can read, scanning back from the end and skipping every line that does not deserialize (ordinal_state_for_rollout, codex-rs/rollout/src/ordinal.rs, on alpha at 8ee2217e79). A complete last record of a type that version does not know is skipped, so the next append reuses its ordinal: a duplicate ordinal, which stops Codex's history projection of the thread (\"expected ordinal N+1, got N\"). Reported by openai/codex#44417 and #44440 (repro resumed_paginated_rollout_preserves_unknown_tail_ordinal; #44440 still open in September 2026) and on 0.153.4 (#43142): every version with paginated history, 0.145 (ordinals: openai/codex#32332) to at least 0.153.4, has it. " +
			"It is judged before it happens, from the file's Codex version (cli_version): a line type rollout does not know, or one no Codex version reads (context_handoff, written by orchestrators), is unknown to all; token_usage_record, retained_context and realtime_item are newer than 0.149 (not in rust-v0.149.0-alpha.3), security_risk_score than 0.147 (0.148), world_state than 0.142 (0.143). Event types inside event_msg are not judged. " +
			"Nothing in the file is wrong yet: resume with a Codex that reads the type, or move the unknown records out (rollout repair can then renumber).",
	}, func(e reconstruct.OrdinalUnknownTailEvidence) string {
		who := "no Codex version reads"
		if e.ReadSince != "" {
			who = "Codex before " + e.ReadSince + " (this file's " + e.CLIVersion + ") cannot read"
		}
		next := ""
		if e.NextOrdinal != nil {
			next = fmt.Sprintf(" ordinal %d", *e.NextOrdinal)
		}
		return fmt.Sprintf("the file ends with %v records, which %s: the next resume by such a version skips them and appends at%s again, a duplicate ordinal (openai/codex#44440)", e.Type, who, next)
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
			projectionReads + ": up to 0.153.4 it stops at the second one (\"expected ordinal N+1, got N\", openai/codex#41079, #42241) and the app's views of the thread freeze there; later builds skip the second line (#43182). What the model resumes from does not read ordinals. " +
			"When the second line repeats the first one's record (the same type and payload; a writer wrote it twice, as the two thread_settings_applied of #41079), the copy is redundant: repair moves it to quarantine and renumbers nothing, since the lines after it already go on from the first one, which is what users who recovered their projection by hand did. " +
			"Otherwise the two are different records and both are kept: repair renumbers from the second on.",
		Fix:  "move a copy of the record before it to quarantine; otherwise renumber from this line on, going on from the ordinal before it",
		plan: withEvidence(fixDuplicateOrdinal),
	}, func(e reconstruct.OrdinalDuplicateEvidence) string {
		if e.Copy {
			return fmt.Sprintf("ordinal %d used twice: the line repeats line %d's record", e.Ordinal, e.FirstLine)
		}
		return fmt.Sprintf("ordinal %d used twice", e.Ordinal)
	}),
	on(Rule{ID: "ordinal/foreign-records", Severity: Error, Since: "0.5.0",
		Title: "records of another rollout after the thread's own: ordinals restart and the records carry another thread's ids",
		Doc: "A run of lines whose ordinals restart below the file's and go on by one, holding another thread's id (payload.thread_id, neither the file's nor its parent's): a bad merge or a sync tool appended another rollout's records, a sub-agent's typically. " +
			"Codex resumes the file and sends those records as this thread's history: 0.171.0 resumed the conformance case corrupt/foreign-records (the first turn's records up to its first call output, appended with another thread's ids and their own ordinals) and sent the other thread's developer, context and prompt messages, call and output after the thread's last answer. " +
			"Renumbering would make them look like the thread's own; repair moves the run to quarantine instead (its lines stay there, byte for byte), and the ordinal findings of the run go with it; with this fix not selected, ordinal/non-monotonic does not renumber the run either. Turn ids alone do not decide (the file's own lines moved before their turn's start look the same); a copy of the thread's own records is not reported here but as ordinal/non-monotonic or a duplicate.",
		Fix:  "move the run's lines to quarantine",
		plan: withEvidence(quarantineForeign),
	}, func(e reconstruct.OrdinalForeignEvidence) string {
		return fmt.Sprintf("%d records of another rollout (lines to %d, ordinals restarting at %d after %d, thread %s): Codex sends them as this thread's history", e.Records, e.Through, e.First, e.After, e.ThreadID)
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
		plan: renumberOwn,
	}, func(e reconstruct.OrdinalBackwardsEvidence) string {
		return fmt.Sprintf("ordinal %d after %d goes backwards", e.Got, e.Previous)
	}),
	on(Rule{ID: "ordinal/next-item", Severity: Warning, Since: "0.4.0",
		Title: "a compaction checkpoint's next_item_ordinal names no record at or before it, nor the next one",
		Doc: "Codex 0.171 can write resume_metadata.next_item_ordinal in a compacted record (a field of the binary's ResumeMetadata, absent from 0.154 and from the stored Codex source). Modelled, unverified: the ordinal of the first record the checkpoint does not cover. An async compaction (core/src/session/async_compaction.rs, new in 0.171) samples the history and is persisted later, so the records from that ordinal to the checkpoint stay after it; a compaction taken in place covers everything before it, and the value is the ordinal the next record takes. " +
			"Either way it names a record at or before the checkpoint (from the thread's first ordinal, session_meta.history_base for a fork) or the one right after it. A value past that points at records Codex has not written, so a resume from the checkpoint and ordinal_state_for_rollout (codex-rs/rollout/src/ordinal.rs), which numbers on from the file's last record, disagree on which ordinals are taken: the duplicate-ordinal stall of openai/codex#44417, #44609 and #44562. " +
			"No run of 0.171 under the conformance harness wrote the field (local and remote compactions, with and without dynamic tools, and an async one: goldens compact-local, compact-remote, dynamic-tools, compact-async). rollout repair refuses a renumbering that would change the ordinal of a record such a checkpoint names or covers.",
	}, func(e reconstruct.OrdinalNextItemEvidence) string {
		return fmt.Sprintf("next_item_ordinal %d of the compaction at ordinal %d names no record at or before it (from %d) nor the next one (%d)", e.Next, e.Ordinal, e.Base, e.Ordinal+1)
	}),
	on(Rule{ID: "ordinal/in-legacy", Severity: Warning, Since: "0.1.0",
		Title: "ordinals in a legacy-mode file",
		Doc:   "Only paginated files carry ordinals. Their presence in a legacy file suggests lines copied from a paginated rollout. Reported once per file.",
	}, func(e reconstruct.OrdinalInLegacyEvidence) string {
		return inThisFile("ordinals in a legacy-mode file (first occurrence)", e.Count)
	}),
}

// quarantineForeign moves a run of another rollout's records to
// quarantine: renumbering them would adopt them into the thread.
func quarantineForeign(p *planner, f Finding, e reconstruct.OrdinalForeignEvidence) string {
	if e.Through < f.Line {
		return "the run's lines are unknown"
	}
	for l := f.Line; l <= e.Through; l++ {
		p.addLineEdit(l, "drop", rollout.EditDrop, f.Rule)
	}
	return ""
}

// renumberOwn renumbers, unless the line starts a run of another
// rollout's records whose quarantine was not selected: renumbering would
// make them the thread's own. (ordinal/foreign-records sorts before
// ordinal/non-monotonic at one line, so it is judged first.)
func renumberOwn(p *planner, f Finding) string {
	for _, u := range p.fp.Left {
		if u.Rule == "ordinal/foreign-records" && u.Line == f.Line {
			return "the lines from here are another rollout's records (ordinal/foreign-records): renumbering would adopt them into the thread"
		}
	}
	return renumber(p, f)
}

// fixDuplicateOrdinal removes a record written twice and renumbers
// around a line that is another record.
func fixDuplicateOrdinal(p *planner, f Finding, e reconstruct.OrdinalDuplicateEvidence) string {
	if !e.Copy {
		return renumber(p, f)
	}
	if !p.drops(f.Line) {
		p.addLineEdit(f.Line, "drop", rollout.EditDrop, f.Rule)
	}
	return ""
}
