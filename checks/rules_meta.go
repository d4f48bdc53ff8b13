package checks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// session_meta: the thread's identity on line 1.
var metaRules = []*Rule{
	on(Rule{ID: "meta/unchecked-version", Severity: Warning, Since: "0.3.0",
		Title: "written by a Codex newer than any version the rules were checked against",
		Doc: "rollout's replay and rules were checked against real Codex releases (the conformance goldens, `rollout version` prints the range). " +
			"A file whose session_meta cli_version is a later minor release may hold records, item types or fields that release added and rollout does not know: they are kept verbatim but not judged, so a clean verdict does not cover them. " +
			"One finding per file, at its session_meta; patch releases of a checked minor count as checked. " +
			"An unknown record type in such a file is a warning (envelope/unknown-type). Upgrade rollout, or run `make drift VERSION=...` in its repository to see what the release writes that rollout does not know.",
	}, func(e reconstruct.MetaUncheckedVersionEvidence) string {
		return fmt.Sprintf("written by Codex %s, newer than the versions rollout's rules and replay were checked against (%s to %s): records, items and fields this version added may be unknown to rollout and are not judged",
			e.CLIVersion, e.CheckedOldest, checkedThrough(e.CheckedThrough))
	}),
	on(Rule{ID: "meta/missing", Severity: Error, Since: "0.1.0",
		Title: "no session_meta on line 1 and none anywhere",
		Doc: "Without session_meta Codex cannot tell which thread the file belongs to: the session does not appear in `codex resume` and cannot be resumed. " +
			"Remedy: restore the file, or its first line, from a backup: Codex reads the thread's metadata (id, working directory, model provider, history mode) from session_meta, which no fix can make up. An empty file (0 bytes: created and never written, or emptied) has nothing to resume (Codex 0.171.0 refuses it: \"rollout at PATH is empty\", measured): restore it from a backup, or remove it.",
	}, func(e reconstruct.MetaMissingEvidence) string {
		if e.Empty {
			return "empty file: nothing to resume (restore it from a backup, or remove it)"
		}
		return "no session_meta line: the thread cannot be identified or resumed"
	}),
	on(Rule{ID: "meta/not-first", Severity: Error, Since: "0.1.0",
		Title: "session_meta present but not on line 1",
		Doc:   "Codex reads the thread's metadata from the first line. A session_meta further down (after a bad merge or a concatenation) hides the session from listings.",
		Fix:   "move the session_meta line to line 1",
		plan:  moveMeta,
	}, func(e reconstruct.MetaNotFirstEvidence) string {
		return fmt.Sprintf("session_meta is not the first line (line %d is)", e.FirstLine)
	}),
	on(Rule{ID: "meta/unexpected-extra", Severity: Error, Since: "0.1.0",
		Title: "a second session_meta in a file that is not a fork or sub-agent",
		Doc:   "Only forks (forked_from_id, parent_thread_id) and sub-agents replay a parent's session_meta. Elsewhere a second one means two rollouts were concatenated.",
	}, func(e reconstruct.MetaUnexpectedExtraEvidence) string {
		return fmt.Sprintf("second session_meta (id %v) in a file that is not a fork or sub-agent", e.ID)
	}),
	on(Rule{ID: "meta/filename-mismatch", Severity: Warning, Since: "0.1.0",
		Title: "the filename's thread id differs from session_meta.payload.id",
		Doc: "Resuming a paginated thread, Codex 0.171 checks that the file's session_meta names the thread it was asked for and refuses otherwise (\"thread source changed during resume\"): measured with the conformance case corrupt/edited-meta-id (session_meta.payload.id edited, the file name and the records unchanged), which 0.148.0 to 0.169.1 resume under session_meta's id and 0.171.0 refuses, the file of 0.165.0 as well as its own. A paginated file is resumed by whatever Codex is installed, so this is an error in every paginated file. " +
			"In a legacy file Codex trusts the payload id; tools that index by filename attach the session to the wrong thread (a warning). " +
			"When the file name and the records that name a thread (payload.thread_id) agree, and none names session_meta's id, session_meta was edited: repair writes the file name's id back into session_meta.payload.id (only those bytes change). Otherwise the file may have been renamed, and nothing is changed. " +
			"A reverted thread's files are named rollout-<time>-<thread>_<rollout>.jsonl: the thread id is the part before the `_`, the part after it the rollout's own id (`RolloutFileName::parse`, codex-rs/rollout/src/rollout_file_name.rs, openai/codex 4ef836f883, #38127).",
		Fix:  "write the file name's thread id into session_meta.payload.id, when the records name the same thread",
		plan: withEvidence(restoreMetaID),
		context: severityBy(func(e reconstruct.MetaFilenameMismatchEvidence, _ *reconstruct.State) Severity {
			if e.Paginated {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.MetaFilenameMismatchEvidence) string {
		records := ""
		if n := e.RecordsWithFileID + e.RecordsWithPayloadID; n > 0 {
			records = fmt.Sprintf(" (%d records name the file name's thread, %d session_meta's)", e.RecordsWithFileID, e.RecordsWithPayloadID)
		}
		if e.Paginated {
			return fmt.Sprintf("file name says thread %v, session_meta says %v%s: Codex 0.171 does not resume the thread (\"thread source changed during resume\"; 0.148 to 0.169 resume it as session_meta's)", e.FileID, e.PayloadID, records)
		}
		return fmt.Sprintf("file name says thread %v, session_meta says %v%s: Codex resumes it as session_meta's thread", e.FileID, e.PayloadID, records)
	}),
	on(Rule{ID: "meta/unknown-history-mode", Severity: Error, Since: "0.1.0",
		Title: "history_mode other than legacy or paginated",
		Doc: "A reader must fail closed on an unknown history mode: replaying it with the wrong rules would report false faults and plan wrong fixes. The file comes from a newer Codex, a Codex fork (paginated_refs_v1 and paginated_refs_v2 exist) or was edited. " +
			"rollout does not replay such a file: the checks that need the replay (ordinal, item, tool, turn, rollback, worldstate, compaction, agentcomm, tokens, handoff, line/over-migration-limit) are skipped and the finding lists them; the line checks (line/*) and the envelope checks (envelope/*, meta/*) still run. repair changes nothing in such a file.",
	}, func(e reconstruct.MetaUnknownHistoryModeEvidence) string {
		return fmt.Sprintf("history_mode %v is neither legacy nor paginated: the history was not replayed, only line and envelope checks ran (skipped: %v)", e.Value, strings.Join(e.Skipped, ", "))
	}),
}

// checkedThrough spells the newest checked version as its minor's range
// ("0.171.x"): patch releases of a checked minor count as checked.
func checkedThrough(v string) string {
	if i := strings.LastIndexByte(v, '.'); i > 0 {
		return v[:i] + ".x"
	}
	return v
}

// restoreMetaID writes the file name's thread id over session_meta's when
// the records agree with the name: a byte splice of the id string, the
// rest of the line as it was.
func restoreMetaID(p *planner, f Finding, e reconstruct.MetaFilenameMismatchEvidence) string {
	switch {
	case e.RecordsWithFileID == 0:
		return "no record names the file name's thread: the file may have been renamed"
	case e.RecordsWithPayloadID > 0:
		return "records name both threads"
	}
	p.add(f.Line, "meta-id", rollout.Edit{Kind: rollout.EditSplice, Label: f.Rule, Match: lineTypeIs(rollout.TypeSessionMeta),
		Splice: func(obj []byte) (int, int, []byte, error) {
			v := gjson.GetBytes(obj, "payload.id")
			if v.Type != gjson.String || v.Str != e.PayloadID || v.Index <= 0 {
				return 0, 0, nil, fmt.Errorf("%w: line %d: session_meta.payload.id is not %s", rollout.ErrSkipEdit, f.Line, e.PayloadID)
			}
			return v.Index, v.Index + len(v.Raw), []byte(strconv.Quote(e.FileID)), nil
		}})
	return ""
}
