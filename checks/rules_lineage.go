package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Lineages: a paginated fork or revert continues the prefix of another
// rollout up to the cutoff its session_meta.history_base names. Codex
// resolves the chain by rollout id under the home's sessions/ and
// archived_sessions/ and refuses the whole thread ("invalid paginated
// history lineage for ID: ...") in six cases, in this order:
// resolve_rollout_lineage_with_representation and validate_cutoff_bounds,
// codex-rs/thread-store/src/local/rollout_lineage.rs (openai/codex
// rust-v0.147.0, 04f47de343; by rollout id since 8d4d57387a, #38244); the
// messages and refusals measured with Codex 0.153.4 and 0.171.0. The
// findings are at the file's session_meta: the file that cannot be resumed.
// A file that inherits the fault from a rollout it continues names it
// ("through FILE").
var lineageRules = []*Rule{
	on(Rule{ID: "lineage/missing-source", Severity: Error, Since: "0.3.0",
		Title: "history_base names a rollout the home does not have",
		Doc: "Codex looks the source up by its rollout id: the file name's id after the `_` of a reverted thread's file, else its thread id, under sessions/ and then archived_sessions/, plain or .zst (`find_rollout_path_by_rollout_id`, codex-rs/rollout/src/list.rs). When no file has it, resume fails with \"missing source rollout\" (`resolve_rollout_lineage_with_representation`, codex-rs/thread-store/src/local/rollout_lineage.rs, openai/codex rust-v0.147.0 `04f47de343`; by rollout id since `8d4d57387a`, #38244; measured with 0.153.4 and 0.171.0), and every fork of the thread with it. The source was deleted or moved out of the home by hand (`codex delete` refuses a referenced rollout, #38292). " +
			"The finding is made only when the whole home was read: a source that is merely not among the inputs is a note. " +
			"Remedy: put the source back into the home under its name (from a backup or another copy of the home); nothing in the fork can replace it, as the fork does not repeat the prefix.",
	}, func(e reconstruct.LineageMissingSourceEvidence) string {
		return fmt.Sprintf("continues rollout %s%s, which is in neither sessions/ nor archived_sessions/ of the home: Codex refuses to resume the thread (\"missing source rollout\"); put that rollout back", e.RolloutID, through(e.Via))
	}),
	on(Rule{ID: "lineage/cycle", Severity: Error, Since: "0.3.0",
		Title: "following history_base comes back to a rollout of the chain",
		Doc: "Codex follows history_base from rollout to rollout, each once, and refuses the thread with \"cycle detected\" when one comes again (a rollout naming itself included), in `resolve_rollout_lineage_with_representation` (codex-rs/thread-store/src/local/rollout_lineage.rs, rust-v0.147.0 `04f47de343`; measured with 0.153.4 and 0.171.0). Codex never writes one: a history_base was edited or copied between files. " +
			"Remedy: give the file its real source's rollout id in history_base.thread_id (the parent it was forked from: forked_from_id, when it has one, names that thread). " +
			"Except for a reverted thread's file whose name lost its `_<rollout>` suffix (renamed by hand or by a sync tool): its rollout id is then its thread id, which is also the id its history_base names (the thread's previous rollout), so it names itself. Its history_base is right; restore its name, rollout-<time>-<thread>_<rollout>.jsonl, with the rollout id Codex gave it (the state DB's threads.rollout_path names that file). Editing history_base would cut the file from the history it continues.",
	}, func(e reconstruct.LineageCycleEvidence) string {
		if e.NameLostRollout {
			return fmt.Sprintf("history_base names rollout %s, this file's own id by its name: Codex refuses to resume the thread (\"cycle detected\"); a reverted file whose name lost its _<rollout> suffix: restore the name (rollout-<time>-<thread>_<rollout>.jsonl), do not edit history_base", e.RolloutID)
		}
		return fmt.Sprintf("history_base leads back to rollout %s%s: Codex refuses to resume the thread (\"cycle detected\")", e.RolloutID, through(e.Via))
	}),
	on(Rule{ID: "lineage/other-thread", Severity: Warning, Since: "0.3.0",
		Title: "a rollout of the chain names another thread in its session_meta than in its file name",
		Doc: "Codex 0.147 found a source by thread id and refused it when its session_meta named another thread (\"source rollout belongs to another thread\", `resolve_rollout_lineage_with_representation`, codex-rs/thread-store/src/local/rollout_lineage.rs, rust-v0.147.0 `04f47de343`). Since 8d4d57387a (#38244, 0.148) it finds sources by rollout id and checks only the thread being resumed; 0.153.4 and 0.171.0 read such a source (measured). Tools that index by file name attach it to the wrong thread, and an older Codex refuses the fork. " +
			"Remedy: name the source after its session_meta's thread id, keeping its rollout id: rollout-<time>-<thread>_<rollout>.jsonl (the rollout id is what the fork names; changing it breaks the fork).",
	}, func(e reconstruct.LineageOtherThreadEvidence) string {
		return fmt.Sprintf("continues %s%s, whose file name says thread %s and whose session_meta says %s: Codex 0.147 refuses it (\"source rollout belongs to another thread\"), 0.148 and later read it", e.Source, through(e.Via), e.NameThread, e.MetaThread)
	}),
	on(Rule{ID: "lineage/source-not-paginated", Severity: Error, Since: "0.3.0",
		Title: "the rollout history_base names is not paginated",
		Doc: "A byte offset into another rollout means something only in a paginated one: Codex refuses the thread with \"source rollout is not paginated\" when the source's session_meta.history_mode is anything else (`resolve_rollout_lineage_with_representation`, codex-rs/thread-store/src/local/rollout_lineage.rs, rust-v0.147.0 `04f47de343`; measured with 0.153.4 and 0.171.0). The source was replaced by a legacy copy after the fork (a backup of the pre-migration file, a restore from an archive). " +
			"Remedy: put the paginated source back, the one the fork's cutoff was taken from; migrating the legacy copy again (`codex migrate-rollouts`) writes other bytes, so the cutoff would not fit.",
	}, func(e reconstruct.LineageNotPaginatedEvidence) string {
		return fmt.Sprintf("continues %s%s, whose history_mode is %q, not paginated: Codex refuses to resume the thread (\"source rollout is not paginated\"); put the paginated source back", e.Source, through(e.Via), e.HistoryMode)
	}),
	on(Rule{ID: "lineage/cutoff-includes-meta", Severity: Error, Since: "0.3.0",
		Title: "history_base.end_ordinal_exclusive is 0",
		Doc: "A cutoff before ordinal 1 would inherit nothing but the source's own session_meta: Codex refuses the thread with \"cutoff cannot include source session metadata\" (`validate_cutoff_bounds`, codex-rs/thread-store/src/local/rollout_lineage.rs, rust-v0.147.0 `04f47de343`; measured with 0.153.4 and 0.171.0). Codex never writes it: the history_base was edited. " +
			"Remedy: set end_ordinal_exclusive to the ordinal of the source's record at end_byte_offset (one past the last inherited record's).",
	}, func(e reconstruct.LineageCutoffIncludesMetaEvidence) string {
		return fmt.Sprintf("history_base.end_ordinal_exclusive is 0 in its cutoff of %s%s: Codex refuses to resume the thread (\"cutoff cannot include source session metadata\")", e.Source, through(e.Via))
	}),
	on(Rule{ID: "lineage/cutoff-past-end", Severity: Error, Since: "0.3.0",
		Title: "history_base.end_byte_offset lies past the end of its source",
		Doc: "The source is shorter than the prefix the fork inherits: it was rewritten after the fork (by hand, by a tool that shrinks rollouts, by `rollout reclaim` before 0.3.0, which now refuses), or truncated. Codex refuses the thread with \"cutoff byte offset is past the source rollout\" (`validate_cutoff_bounds`, codex-rs/thread-store/src/local/rollout_lineage.rs, rust-v0.147.0 `04f47de343`; 0.171.0 says it from its model-context scan, `scan_model_context_from_lineage_blocking`, codex-rs/thread-store/src/local/model_context.rs). The offset counts the decompressed bytes of a .zst source. " +
			"Remedy: put the source's bytes back (its backup, `rollout reclaim --undo` or `rollout repair --undo` of the rewrite); the fork cannot be made to fit a shorter source.",
	}, func(e reconstruct.LineageCutoffPastEndEvidence) string {
		return fmt.Sprintf("history_base.end_byte_offset %d lies past the end of %s (%d bytes)%s: Codex refuses to resume the thread (\"cutoff byte offset is past the source rollout\"); the source was shortened after the fork: restore its bytes", e.Offset, e.Source, e.Size, through(e.Via))
	}),
	on(Rule{ID: "lineage/cutoff-off-boundary", Severity: Warning, Since: "0.3.0",
		Title: "history_base's cutoff is not where its ordinal says",
		Doc: "Codex writes a cutoff at a line boundary, end_byte_offset just past the last inherited record and end_ordinal_exclusive the ordinal of the record that follows it there (or one past the last record's, at the end of the source). Codex 0.153.4 and 0.171.0 resume a cutoff that is not (measured), but what they rebuild and what they page through by ordinal then differ: the model context is read back from the byte offset, so a record the offset cuts does not parse and is dropped (`ReverseJsonlScanner::new_at` in `scan_model_context_from_lineage_blocking`, codex-rs/thread-store/src/local/model_context.rs, rust-v0.147.0 `04f47de343`), while the thread's turns and items are listed by ordinal (`segment_index_for_ordinal`, rollout_lineage.rs). The source was rewritten after the fork with other line lengths, or the history_base was edited. " +
			"Remedy: restore the source's bytes from before the rewrite; else set end_byte_offset to the end of the last record the fork inherits and end_ordinal_exclusive to one past its ordinal.",
	}, func(e reconstruct.LineageCutoffOffBoundaryEvidence) string {
		if e.Dropped {
			return fmt.Sprintf("history_base.end_byte_offset %d cuts line %d of %s%s %d bytes in: Codex does not replay that record (it reads the prefix back from the offset), although the cutoff's ordinal %d says it is inherited", e.Offset, e.Line, e.Source, through(e.Via), e.Cut, e.Want)
		}
		next := "the end of the source"
		if e.Line > 0 {
			next = fmt.Sprintf("line %d", e.Line)
		}
		return fmt.Sprintf("history_base says its cutoff in %s%s ends before ordinal %d, but at byte %d (%s) the next ordinal is %d: Codex rebuilds the prefix by bytes and lists its turns by ordinals, which disagree", e.Source, through(e.Via), e.Want, e.Offset, next, *e.Next)
	}),
	on(Rule{ID: "lineage/malformed-base", Severity: Error, Since: "0.3.0",
		Title: "session_meta.history_base is not a HistoryPosition",
		Doc: "history_base is `{thread_id, end_ordinal_exclusive, end_byte_offset}`: a rollout id and two unsigned integers (`HistoryPosition`, codex-rs/protocol/src/protocol.rs, rust-v0.147.0 `04f47de343`). Anything else makes Codex's session_meta fail to deserialize: the thread cannot be read, listed or resumed. " +
			"Remedy: write the three fields as Codex does (the source's rollout id, the ordinal and byte offset just past the last inherited record).",
	}, func(e reconstruct.LineageMalformedBaseEvidence) string {
		return fmt.Sprintf("session_meta.history_base%s has no valid %s: Codex cannot read the session_meta, so it can neither list nor resume the thread", through(e.Via), e.Field)
	}),
}

// through names the rollout whose history_base is at fault when it is not
// the file's own.
func through(via string) string {
	if via == "" {
		return ""
	}
	return " (through " + via + ")"
}
