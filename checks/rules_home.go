package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
)

// A Codex home (`rollout home`): its SQLite index and history projection,
// writer locks and migration leftovers against its rollout files. The
// facts come from the home package. Statements are for sqlite3 while no
// Codex process runs (`rollout home` lists held writer locks).
var homeRules = []*Rule{
	on(Rule{ID: "home/row-file-missing", Severity: Warning, Since: "0.1.0",
		Title: "a threads row whose rollout_path names no file",
		Doc: "The resume picker and the app list threads from the `threads` table of state_N.sqlite. When the row's path is stale (the file was moved or deleted by hand), Codex 0.169+ looks the thread up by file name under sessions/ on `codex resume ID` and rewrites the row's path (read repair in `find_thread_path_by_id_str`, codex-rs/rollout/src/list.rs). When no file of the thread exists, the picker lists a thread that cannot be resumed. " +
			"Remedy: resume it by id (`codex resume ID`) when the file exists elsewhere in the home, or set the path with `UPDATE threads SET rollout_path = 'PATH' WHERE id = 'ID'`; when the file is gone, `DELETE FROM threads WHERE id = 'ID'` (and the thread's rows in thread_history_N.sqlite).",
		context: severityBy(func(e reconstruct.HomeRowFileMissingEvidence, _ *reconstruct.State) Severity {
			if e.FoundAt == "" {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.HomeRowFileMissingEvidence) string {
		if e.FoundAt != "" {
			return fmt.Sprintf("threads row %s names %s, which does not exist; Codex finds the thread by name at %s on `codex resume %s` and rewrites the row; to fix it now: UPDATE threads SET rollout_path = %s WHERE id = %s",
				e.ThreadID, e.RolloutPath, e.FoundAt, e.ThreadID, sqlString(e.FoundAt), sqlString(e.ThreadID))
		}
		return fmt.Sprintf("threads row %s names %s, which does not exist, and the home has no rollout of the thread: the picker lists a thread that cannot be resumed; remove the row: DELETE FROM threads WHERE id = %s",
			e.ThreadID, e.RolloutPath, sqlString(e.ThreadID))
	}),
	on(Rule{ID: "home/row-outside-home", Severity: Error, Since: "0.1.0",
		Title: "a threads row whose rollout_path lies outside the home",
		Doc: "Codex stores an absolute rollout_path. In a home that was copied or moved (a backup restored elsewhere, a CODEX_HOME synced between machines), the rows still name the old home's files: Codex resumes, and appends to, the file in the other home, not the one here, and the two copies of the thread diverge. " +
			"Remedy: point the row at the thread's file in this home: `UPDATE threads SET rollout_path = 'PATH' WHERE id = 'ID'` (the finding names PATH when the home has the file).",
	}, func(e reconstruct.HomeRowOutsideHomeEvidence) string {
		msg := fmt.Sprintf("threads row %s names %s, outside the home %s: Codex resumes and appends to that file, not to this home's", e.ThreadID, e.RolloutPath, e.Home)
		if e.FoundAt != "" {
			return msg + fmt.Sprintf("; point it at this home's copy: UPDATE threads SET rollout_path = %s WHERE id = %s", sqlString(e.FoundAt), sqlString(e.ThreadID))
		}
		return msg + "; this home has no rollout of the thread"
	}),
	on(Rule{ID: "home/row-other-thread", Severity: Error, Since: "0.1.0",
		Title: "a threads row names a file that belongs to another thread",
		Doc: "The file the row names carries another thread's session_meta id, or an earlier row names the same file. Codex checks the id when it resolves a thread (\"state db returned rollout path for thread X but file belongs to thread Y\") and falls back to a search by file name, which finds the thread's own file when it exists; the picker meanwhile shows the row's title over another thread's history. " +
			"Remedy: `UPDATE threads SET rollout_path = 'PATH' WHERE id = 'ID'` with the thread's own file (named in the finding when the home has one).",
	}, func(e reconstruct.HomeRowOtherThreadEvidence) string {
		msg := fmt.Sprintf("threads row %s names this file, which belongs to thread %s", e.ThreadID, e.FileThread)
		if e.FoundAt != "" {
			return msg + fmt.Sprintf("; Codex falls back to the thread's own file %s; fix the row: UPDATE threads SET rollout_path = %s WHERE id = %s", e.FoundAt, sqlString(e.FoundAt), sqlString(e.ThreadID))
		}
		return msg + "; the home has no file of thread " + e.ThreadID + ": Codex cannot resume it"
	}),
	on(Rule{ID: "home/rollout-without-row", Severity: Warning, Since: "0.1.0",
		Title: "a rollout whose thread has no threads row (missing from the resume picker)",
		Doc: "The picker and the app list threads from state_N.sqlite, not from the files: a rollout without a row is invisible there, the most reported \"my session disappeared\" case (a backfill marked complete that did not run, a row deleted, a file copied in by hand). The session is intact. " +
			"Remedy: resume it by id, `codex resume ID`: Codex finds the file by name and writes the row back (measured with Codex 0.171.0). Not for a file without session_meta (an empty file, meta/missing): it has nothing to resume (Codex 0.171.0's `codex exec resume ID` of an empty file exits 1, \"failed to read session metadata ...: rollout at PATH is empty\", and writes no row; measured); restore it from a backup, or remove it.",
	}, func(e reconstruct.HomeRolloutWithoutRowEvidence) string {
		if e.NoMeta {
			return fmt.Sprintf("thread %s has no row in the threads table, and its file has no session_meta (an empty file: nothing to resume, meta/missing): `codex resume` cannot bring it back; restore the file from a backup, or remove it", e.ThreadID)
		}
		return fmt.Sprintf("thread %s has no row in the threads table: it is missing from `codex resume`'s picker and the app; `codex resume %s` finds the file by name and writes the row back", e.ThreadID, e.ThreadID)
	}),
	on(Rule{ID: "home/history-mode-mismatch", Severity: Warning, Since: "0.1.0",
		Title: "threads.history_mode disagrees with the file's session_meta",
		Doc: "Codex's migration decides from the row whether a thread still needs migrating (a row marked paginated is done) and reads the thread in the row's mode. A legacy file under a row marked paginated is typically a pre-migration copy restored over the migrated file (a backup, `reclaim --undo` of an old snapshot); a paginated file under a legacy row, a row written by an older Codex. " +
			"Remedy: make the row say what the file is, `UPDATE threads SET history_mode = 'MODE' WHERE id = 'ID'`, and let Codex project the thread again (delete its rows in thread_history_N.sqlite); for a legacy file, `codex migrate-rollouts --thread ID` then shows what the migration will do.",
	}, func(e reconstruct.HomeHistoryModeMismatchEvidence) string {
		return fmt.Sprintf("threads row %s says history_mode %s, the file's session_meta says %s; fix the row: UPDATE threads SET history_mode = %s WHERE id = %s",
			e.ThreadID, e.Row, e.File, sqlString(e.File), sqlString(e.ThreadID))
	}),
	on(Rule{ID: "home/archived-mismatch", Severity: Warning, Since: "0.1.0",
		Title: "threads.archived disagrees with the directory the file is in",
		Doc: "`codex archive` moves the file to archived_sessions/ and sets the row's archived flag; `codex unarchive` undoes both. A file moved by hand leaves the flag behind: the picker hides an active session, or lists an archived one whose file Codex then looks for in the other directory. " +
			"Remedy: move the file back, or set the flag to match: `UPDATE threads SET archived = N WHERE id = 'ID'`.",
	}, func(e reconstruct.HomeArchivedMismatchEvidence) string {
		want := 0
		state := "not archived"
		if e.Archived {
			state = "archived"
		}
		if e.Dir == "archived_sessions" {
			want = 1
		}
		return fmt.Sprintf("threads row %s is %s but the file is in %s/; fix the row: UPDATE threads SET archived = %d WHERE id = %s", e.ThreadID, state, e.Dir, want, sqlString(e.ThreadID))
	}),
	on(Rule{ID: "home/attached-parent-missing", Severity: Warning, Since: "0.1.0",
		Title: "an attached thread whose parent thread has no threads row",
		Doc: "Codex 0.171 keeps side conversations as attached threads: `thread/fork` with `attachToSource` makes a paginated fork of the parent (its session_meta says `attached_thread: true` and its history_base continues the parent's rollout) and sets the fork's `threads.attached_thread_parent_id` to the parent, an edge only SQLite keeps (measured with the conformance scenario `attached`). Ordinary thread lists leave attached threads out (`attached_thread_parent_id IS NULL`), and the app finds them only through their parent (`thread/list {attachedToThreadId}`); Codex refuses to delete a thread while a thread is attached to it (\"cannot delete thread while attached thread … exists\", strings of the 0.171.0 binary). A row whose parent has no row is therefore listed nowhere: the parent's row was deleted behind Codex's back, or by a tool that does not know the edge. The attached thread's history is intact. " +
			"Remedy: when the home still has the parent's rollout, `codex resume PARENT` writes its row back and the attached thread is listed under it again (measured with Codex 0.171.0); otherwise make it an ordinary thread: `UPDATE threads SET attached_thread_parent_id = NULL WHERE id = 'ID'`.",
	}, func(e reconstruct.HomeAttachedParentMissingEvidence) string {
		msg := fmt.Sprintf("thread %s is attached to thread %s, which has no threads row: Codex lists attached threads only under their parent, so it is listed nowhere", e.ThreadID, e.Parent)
		if e.ParentRollout != "" {
			return msg + fmt.Sprintf("; the parent's rollout %s is in the home: `codex resume %s` writes its row back", e.ParentRollout, e.Parent)
		}
		return msg + fmt.Sprintf("; make it an ordinary thread: UPDATE threads SET attached_thread_parent_id = NULL WHERE id = %s", sqlString(e.ThreadID))
	}),
	on(Rule{ID: "home/attached-cycle", Severity: Warning, Since: "0.1.0",
		Title: "attached threads whose parent edges form a cycle",
		Doc: "Following `threads.attached_thread_parent_id` from a thread leads back to it. Codex attaches a fork to the thread it forks (`thread/fork {attachToSource}`, Codex 0.171), which already exists, so it never makes a cycle; a cycle comes from edited or merged databases. Every thread of the cycle is attached, so none is in the ordinary lists, and each is listed only under another thread of the cycle (`thread/list {attachedToThreadId}`), which no ordinary list leads to: the app cannot reach them. " +
			"Remedy: make one of them an ordinary thread: `UPDATE threads SET attached_thread_parent_id = NULL WHERE id = 'ID'` (the finding names the cycle's first thread).",
	}, func(e reconstruct.HomeAttachedCycleEvidence) string {
		return fmt.Sprintf("attached threads form a cycle (%s -> %s): none is in Codex's ordinary thread lists, and each is listed only under another of them; break it: UPDATE threads SET attached_thread_parent_id = NULL WHERE id = %s",
			strings.Join(e.Cycle, " -> "), e.Cycle[0], sqlString(e.ThreadID))
	}),
	on(Rule{ID: "home/projection-past-eof", Severity: Error, Since: "0.1.0",
		Title: "the history projection's cursor lies past the end of the rollout",
		Doc: "thread_history_N.sqlite keeps a copy of the thread's turns and items (thread_turns, thread_items) made from the rollout up to a byte cursor (thread_history_projection_state.next_rollout_byte_offset). The copy is kept per file, under the file's rollout id in the tables' thread_id column: the thread id for a thread's first file, the id after `_` for a file `thread/revert` wrote (`rollout-…-THREAD_ROLLOUT.jsonl`); a reverted thread therefore has a projection of its original file under the thread id beside that of its current file (measured with Codex 0.148.0 to 0.171.0), and each is compared with its own file. A file shorter than the cursor was rewritten behind Codex's back (a torn-tail repair, a reclaim, a restore): Codex's materialization fails with \"durable rollout shrank before projection\" every time it reads the thread (codex-rs/thread-store/src/local/thread_history_materialization.rs), so the app shows a stale or empty history. " +
			"When the cursor is the end of another rollout of the thread (its size, and the ordinal after its last record), the projection was carried over from that file to the one Codex now reads (openai/codex#43744: the size of the thread's first rollout after its row moved to a continuation): the finding names that file, and this file is not damaged. " +
			"Remedy: delete the thread's projection so that Codex rebuilds it from the file, as Codex does before it rewrites a rollout itself (`thread_history::delete_thread`): the statements are in the finding. `rollout repair --write` and `rollout reclaim --write` do this themselves.",
	}, func(e reconstruct.HomeProjectionPastEOFEvidence) string {
		return fmt.Sprintf("projection cursor of thread %s is at byte %d, past the end of the file (%d bytes): Codex fails with \"durable rollout shrank before projection\"%s; %s", e.ThreadID, e.Cursor, e.Size, carriedOver(e.BelongsTo), deleteProjection(e.ThreadID))
	}),
	on(Rule{ID: "home/projection-off-boundary", Severity: Error, Since: "0.1.0",
		Title: "the history projection's cursor falls inside a line",
		Doc: "Codex resumes projecting at the cursor and reads whole lines from there: a cursor inside a line (the bytes before it changed length) makes it parse the tail of a record as a line of its own, reject it and stall or skip what follows, so the app's history stops there. " +
			"Remedy: delete the thread's projection so that Codex rebuilds it from the file (statements in the finding).",
	}, func(e reconstruct.HomeProjectionOffBoundaryEvidence) string {
		return fmt.Sprintf("projection cursor of thread %s is at byte %d, inside the line that starts at byte %d: Codex would project from the middle of a record%s; %s", e.ThreadID, e.Cursor, e.LineStart, carriedOver(e.BelongsTo), deleteProjection(e.ThreadID))
	}),
	on(Rule{ID: "home/projection-ordinal", Severity: Error, Since: "0.1.0",
		Title: "the ordinal the projection expects next is not the record's at the cursor",
		Doc: "Codex checks that each record it projects carries the ordinal it expects (next_rollout_ordinal, then one more per record) and stops with \"thread history projection for X expected ordinal N, got M\": the history in the app stops growing although the file does. A renumbering repair or a file replaced by an older copy leaves the cursor's ordinal behind the file's. " +
			"Remedy: delete the thread's projection so that Codex rebuilds it from the file (statements in the finding).",
	}, func(e reconstruct.HomeProjectionOrdinalEvidence) string {
		found := "no ordinal"
		if e.Found != nil {
			found = fmt.Sprintf("ordinal %d", *e.Found)
		}
		return fmt.Sprintf("projection of thread %s expects ordinal %d at byte %d, the file has %s there: Codex stops projecting with \"expected ordinal %d\"%s; %s", e.ThreadID, e.Expected, e.Cursor, found, e.Expected, carriedOver(e.BelongsTo), deleteProjection(e.ThreadID))
	}),
	on(Rule{ID: "home/projected-item-mismatch", Severity: Warning, Since: "0.1.0",
		Title: "a projected item whose ordinal names a record that does not carry it",
		Doc: "Each thread_items row keeps the ordinal of the record it was made from. When the record at that ordinal does not carry the item's id, the file changed under the projection (lines removed, moved or renumbered): Codex resumes from the file and the model sees the file's history, but what reads the tables (the app's thread view, search) shows items that are no longer where the projection says. " +
			"Remedy: delete the thread's projection so that Codex rebuilds it from the file (statements in the finding).",
	}, func(e reconstruct.HomeProjectedItemMismatchEvidence) string {
		what := "no record has that ordinal"
		if e.RecordType != "" {
			what = "the record there is a " + e.RecordType + " that does not carry it"
		}
		return fmt.Sprintf("projected %s item %s of thread %s names ordinal %d, but %s; %s", orUnknown(e.ItemType), e.ItemID, e.ThreadID, e.Ordinal, what, deleteProjection(e.ThreadID))
	}),
	on(Rule{ID: "home/writer-lock-held", Severity: Info, Since: "0.1.0",
		Title: "a thread's writer lock is held: a Codex process is writing it",
		Doc: "Codex holds an advisory lock on thread-writer-locks/ID.lock while a process (the TUI, `codex exec`, an idle app-server) may append to the thread, and writes its pid into the file (`WriterLockCoordinator::acquire`, codex-rs/thread-store/src/local/writer_lock.rs). A second Codex resuming the thread fails with \"thread ID already has an active writer (PID N)\", and `rollout repair --write` and `reclaim --write` refuse the thread. When the pid is not running, the holder is another process (a child that inherited the descriptor, a process on another machine sharing the home over NFS). " +
			"Remedy: let that process finish, or stop it (`kill PID`); the lock goes with it.",
		context: severityBy(func(e reconstruct.HomeWriterLockHeldEvidence, _ *reconstruct.State) Severity {
			if e.Alive {
				return Info
			}
			return Warning
		}),
	}, func(e reconstruct.HomeWriterLockHeldEvidence) string {
		switch {
		case e.PID == 0:
			return fmt.Sprintf("thread %s has an active writer (the lock is held; the file names no pid): another Codex fails to resume it, and rollout refuses to write it", e.ThreadID)
		case e.Alive:
			return fmt.Sprintf("thread %s has an active writer, PID %d: another Codex fails to resume it (\"already has an active writer (PID %d)\"), and rollout refuses to write it until that process ends", e.ThreadID, e.PID, e.PID)
		}
		return fmt.Sprintf("thread %s's writer lock is held, but PID %d that it names is not running here: the holder is another process (one that inherited the lock, or one on another machine sharing this home); find it with `fuser` or `lsof` on the lock file", e.ThreadID, e.PID)
	}),
	on(Rule{ID: "home/writer-lock-stale", Severity: Info, Since: "0.1.0",
		Title: "a writer lock file nobody holds (harmless)",
		Doc:   "A lock file left by a Codex process that ended without removing it (killed, crashed). It is harmless: nobody holds the lock, and Codex removes stale lock files the next time it takes a writer lock (\"recover stale thread writer locks\", codex-rs/thread-store/src/local/writer_lock.rs). Nothing to do.",
	}, func(e reconstruct.HomeWriterLockStaleEvidence) string {
		if e.PID != 0 {
			return fmt.Sprintf("stale writer lock of thread %s (left by PID %d, %s; nobody holds it): harmless, Codex removes it when it next takes a writer lock", e.ThreadID, e.PID, aliveText(e.Alive))
		}
		return fmt.Sprintf("stale writer lock of thread %s (nobody holds it): harmless, Codex removes it when it next takes a writer lock", e.ThreadID)
	}),
	on(Rule{ID: "home/migration-pending", Severity: Warning, Since: "0.1.0",
		Title: "a migration journal left by a crashed legacy-to-paginated migration",
		Doc: "`codex migrate-rollouts --apply` (and the background migration) deletes the thread's projection, writes rollout-migrations/ID.pending, stages the paginated copy, renames it over the legacy file, then marks the row paginated and removes the journal (`migrate_one_rollout`, codex-rs/thread-store/src/local/rollout_migration.rs). A journal left behind means the process stopped in between: the file may already be paginated while the row and the projection are not. " +
			"Remedy: run the migration of that thread again, `codex migrate-rollouts --apply --thread ID`: the journal tells it to finish the SQLite side.",
	}, func(e reconstruct.HomeMigrationPendingEvidence) string {
		return fmt.Sprintf("migration of thread %s did not finish (its journal is still here): run `codex migrate-rollouts --apply --thread %s` to complete it", e.ThreadID, e.ThreadID)
	}),
	on(Rule{ID: "home/migration-staged", Severity: Warning, Since: "0.1.0",
		Title: "a staged migration copy left beside a rollout",
		Doc: "The migration stages the paginated copy as .NAME.paginated.tmp (and .decompressed.tmp, .paginated.zst.tmp for a compressed rollout) beside the rollout before renaming it over the original. A staged file left behind is the copy of a migration that stopped before publishing: the original is intact, the copy only takes space. " +
			"Remedy: run the thread's migration again (`codex migrate-rollouts --apply --thread ID`), which stages a fresh copy; then delete the leftover.",
	}, func(e reconstruct.HomeMigrationStagedEvidence) string {
		if e.Rollout == "" {
			return fmt.Sprintf("staged migration copy (%s) of a rollout that is no longer here: a migration stopped before publishing it", sizeText(e.Bytes))
		}
		return fmt.Sprintf("staged migration copy (%s) of %s: a migration stopped before publishing it; the original is intact", sizeText(e.Bytes), e.Rollout)
	}),
}

// deleteProjection is the remedy of a stale projection: the statements
// Codex runs itself before it rewrites a rollout.
func deleteProjection(thread string) string {
	id := sqlString(thread)
	return fmt.Sprintf("delete the projection so that Codex rebuilds it from the file: DELETE FROM thread_items WHERE thread_id = %s; DELETE FROM thread_turns WHERE thread_id = %s; DELETE FROM thread_history_projection_state WHERE thread_id = %s (in thread_history_N.sqlite, in one transaction)", id, id, id)
}

// carriedOver says which file a cursor belongs to, when it is the end of
// another rollout of the thread ("" when none).
func carriedOver(owner string) string {
	if owner == "" {
		return ""
	}
	return fmt.Sprintf(". The cursor is the end of %s, another rollout of the thread: the projection was made from that file and carried over to this one, which Codex now reads (openai/codex#43744); the file is not damaged", owner)
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func orUnknown(s string) string {
	if s == "" {
		return "an"
	}
	return "a " + s
}

func aliveText(alive bool) string {
	if alive {
		return "still running"
	}
	return "no longer running"
}

// FindingOf makes the finding of an observation on path that no replay
// made (the home check): its severity does not depend on a file's state.
func FindingOf(path string, o reconstruct.Observation) (Finding, bool) {
	r := ruleOfKind[o.Kind()]
	if r == nil {
		return Finding{}, false
	}
	return Finding{
		Rule: r.ID, Severity: r.severityOf(o.Evidence, nil), Path: path,
		Line: o.Pos.Line, ByteOffset: o.Pos.Offset, Ordinal: o.Pos.Ordinal,
		Message: r.message(o.Evidence), Fixable: r.Fixable(), Incomplete: r.Incomplete,
		Facts: o.Evidence,
	}, true
}
