package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// newlineBeforeAppend: the version starts a new line before appending to
// a file whose last line is torn (reconstruct.QuirkNewlineBeforeTorn).
func newlineBeforeAppend(cliVersion string) bool {
	yes, _ := reconstruct.Has(reconstruct.QuirkNewlineBeforeTorn, cliVersion)
	return yes
}

// Line shape: what the reader sees of each physical line.
var lineRules = []*Rule{
	on(Rule{ID: "line/invalid-json", Severity: Warning, Since: "0.1.0",
		Title: "a line that is not one JSON object: Codex skips it (a compacted record cut short: the thread resumes uncompacted)",
		Doc: "Codex skips a line it cannot parse and resumes the rest unchanged: every version from 0.40 to 0.171 resumes a turns3 golden with a line of garbage between its records and sends the same history as without it (measured with the conformance harness, internal/testkit/conformance/testdata/*/corrupt/garbage-line.json). " +
			"So the line itself costs nothing (warning); what it held, if it was a record cut by a crash, is lost. Look at the raw line: a partial write, a stray log message or an editor accident. " +
			"A compacted record cut short is the case that matters: Codex skips the checkpoint and resumes uncompacted, sending the history the compaction replaced (every version from 0.40 to 0.171 sends more items than with the compaction: 16 instead of 10 from 0.139 on, 14 instead of 7 in 0.40; testdata/*/corrupt/truncated-compaction.json), so a thread compacted to fit its window may overflow it again. A line whose start names another type loses that record. " +
			"The first line is the exception (error): Codex reads the session_meta there and refuses a file whose first line it cannot read, as it refuses one that begins with a byte order mark (line/bom). " +
			"A torn last line is line/torn-tail, torn bytes with records after them line/glued-record.",
		Fix:  "move the line to FILE.quarantine.jsonl",
		plan: dropLine,
		context: severityBy(func(e reconstruct.LineInvalidJSONEvidence, _ *reconstruct.State) Severity {
			if e.FirstLine {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.LineInvalidJSONEvidence) string {
		switch {
		case e.FirstLine:
			return "line is not one JSON object, and it is the first: Codex cannot read the session metadata and refuses to resume the file"
		case e.Type == "":
			return "line is not one JSON object: Codex skips it and resumes the rest unchanged"
		case e.Type == rollout.TypeCompacted:
			return "compacted record cut short (not one JSON object): Codex skips it and resumes uncompacted, sending the history the compaction replaced (the context may overflow again)"
		}
		return fmt.Sprintf("%s record cut short (not one JSON object): Codex skips it and resumes without it", e.Type)
	}),
	on(Rule{ID: "line/torn-tail", Severity: Error, Since: "0.1.0",
		Title: "the last line has no newline and does not parse (crash mid-write; error before Codex 0.145)",
		Doc: "The agent was killed while writing its last line. The partial record cannot be recovered; everything before it is intact. " +
			"What the next resume does depends on the Codex version (the writer's cli_version is taken for it). Measured with the conformance harness (internal/testkit/conformance/testdata/*/corrupt/torn-tail.json): " +
			"0.40, 0.58, 0.77, 0.104, 0.125, 0.136, 0.142, 0.144.0 and 0.144.6 append their first new record straight onto the fragment, so that record becomes part of an unreadable line and is lost on the resume after (error); " +
			"0.145.0, 0.147, 0.153.4 and 0.171 start a new line first and resume without the fragment (warning). A file with no cli_version is judged as the older versions.",
		Fix:  "cut the torn tail off into FILE.quarantine.jsonl",
		plan: dropLine,
		context: severityBy(func(e reconstruct.LineTornTailEvidence, _ *reconstruct.State) Severity {
			if newlineBeforeAppend(e.CLIVersion) {
				return Warning
			}
			return Error
		}),
	}, func(e reconstruct.LineTornTailEvidence) string {
		torn := fmt.Sprintf("last line is torn: %d bytes without newline that do not parse", e.Bytes)
		if newlineBeforeAppend(e.CLIVersion) {
			return torn + "; Codex " + e.CLIVersion + " starts a new line before appending and resumes without them"
		}
		return torn + "; Codex before " + release(reconstruct.QuirkNewlineBeforeTorn) + " appends its next record onto them, and that record is lost too"
	}),
	on(Rule{ID: "line/glued-record", Severity: Error, Since: "0.3.0",
		Title: "a torn record with complete records glued after it on one line (a crash, then an append)",
		Doc: "A writer died in the middle of a record and the next append wrote complete records right after the torn bytes, on the same line: `{\"ti…` then `{\"timestamp\":…}` (or after the NUL padding a crash can leave where the file system had allocated a block). Codex before 0.145 appends without looking at the file's last byte; from rust-v0.145.0 on open_log_file ends an unterminated last line first (ensure_rollout_is_newline_terminated, codex-rs/rollout/src/recorder.rs; openai/codex#32276, e7d0e14172), so the torn bytes stay a line of their own. " +
			"Codex reads a rollout line by line and skips a line that is not JSON (RolloutRecorder::load_rollout_items, \"failed to parse line as JSON\"), so the intact records are lost on resume with the torn bytes: a function_call glued this way leaves its output without a call, which Codex then drops too. verify and state judge the file as Codex reads it (the output then reports its missing call); repair plans with the records, since cutting the torn bytes off restores them, so it offers no fix for what the cut resolves. " +
			"A record is recognised by its structure: a complete object with a top-level \"timestamp\" string and \"type\", ending the line.",
		Fix:  "split at the record boundary: the torn bytes go to FILE.quarantine.jsonl, the records stay in place byte for byte",
		plan: withEvidence(cutGlued),
	}, func(e reconstruct.LineGluedEvidence) string {
		return fmt.Sprintf("%d torn bytes, then %s glued on: Codex skips the whole line, and %s with it", e.TornBytes, strings.Join(e.Records, ", "), plural(int64(len(e.Records)), "intact record"))
	}),
	on(Rule{ID: "line/bom", Severity: Error, Since: "0.4.0",
		Title: "a UTF-8 byte order mark (EF BB BF) before the first record: Codex refuses the file",
		Doc: "An editor saved the rollout with a byte order mark. Codex reads the first line as JSON and the mark makes it unreadable, so it cannot read the session_meta and refuses to resume the thread: 0.40 to 0.77 fail with \"failed to parse conversation ID from rollout file\", 0.104 to 0.125 with \"failed to parse thread ID from rollout file\", 0.139 to 0.171 with \"... does not start with session metadata\" " +
			"(measured with the conformance harness on the turns3 golden of each version, internal/testkit/conformance/testdata/*/corrupt/bom.json). Nothing is lost: the three bytes hold nothing.",
		Fix:  "strip the 3 bytes of the mark (a byte splice: nothing goes to quarantine)",
		plan: withEvidence(stripBOM),
	}, func(e reconstruct.LineBOMEvidence) string {
		return "the file begins with a UTF-8 byte order mark (EF BB BF, an editor's) before its " + e.Record + ": Codex cannot read the session metadata and refuses to resume the thread"
	}),
	on(Rule{ID: "line/concatenated", Severity: Error, Since: "0.1.0",
		Title: "several JSON objects on one physical line (two writers)",
		Doc:   "Two processes appended to the same rollout without a newline between their records. Each object is intact; Codex rejects the whole line.",
		Fix:   "split the line into one line per object, byte for byte",
		plan:  splitLine,
	}, func(e reconstruct.LineConcatenatedEvidence) string {
		return fmt.Sprintf("%d JSON objects on one line (two writers?)", e.Objects)
	}),
	on(Rule{ID: "line/invalid-utf8", Severity: Error, Since: "0.1.0",
		Title: "bytes that are not UTF-8 (Codex refuses the file, or resumes without the record)",
		Doc: "JSON text must be UTF-8. Codex reads a rollout as UTF-8 text and mostly refuses to resume the whole file when one byte is not: " +
			"0.40 to 0.147 fail with \"stream did not contain valid UTF-8\", 0.148 to 0.153.4, 0.165 and 0.171 with \"thread/resume failed: list_turns is not supported yet\" " +
			"(measured with the conformance harness on a byte 0xff inside an assistant message, internal/testkit/conformance/testdata/*/corrupt/invalid-utf8.json). " +
			"Where Codex reads the file line by line instead, it resumes and silently drops the record that holds the bytes: the message is lost without a word. 0.160.1 does so in the harness; 0.171.0 does so in a Codex home that knows the thread, with its history projection kept or dropped (TestLiveInvalidUTF8, cmd/rollout: the damaged assistant message is missing from the resume's request, the undamaged one is there); the refusals above are of a rollout copied into a home without the thread's rows. " +
			"Lenient readers replace the bytes with U+FFFD, silently changing the content.",
		Fix:  "replace each byte sequence that is not UTF-8 with U+FFFD, on that line only",
		plan: validUTF8,
	}, func(reconstruct.LineInvalidUTF8Evidence) string {
		return "line holds bytes that are not UTF-8: Codex refuses to resume the file, or (0.171 in a home that knows the thread) resumes and silently drops this record"
	}),
	on(Rule{ID: "line/lone-surrogate", Severity: Warning, Since: "0.1.0",
		Title: "a string escapes half of a UTF-16 surrogate pair (\\ud800 alone)",
		Doc:   "A \\uD800-\\uDFFF escape must be a high surrogate followed by a low one. Alone it is not a Unicode character: strict readers (serde_json reading a String) reject the line, lenient ones (encoding/json, JavaScript) turn it into U+FFFD or keep an unpaired surrogate, so readers disagree on the text. Usually a string cut in the middle of an emoji.",
	}, func(reconstruct.LineLoneSurrogateEvidence) string {
		return "line holds a lone surrogate escape (half of a UTF-16 pair): not Unicode text"
	}),
	on(Rule{ID: "line/duplicate-key", Severity: Warning, Since: "0.1.0",
		Title: "an object of a record repeats a key",
		Doc:   "JSON readers disagree on repeated keys: gjson (and rollout's engine) keep the first value, encoding/json and serde_json maps the last, and serde's derived structs reject the line (\"duplicate field\"). A repeated \"type\" or \"id\" can make Codex and rollout read different records. world_state records are covered by worldstate/duplicate-key.",
	}, func(e reconstruct.LineDuplicateKeyEvidence) string {
		return fmt.Sprintf("an object repeats keys %q (%d in all): readers disagree on which value wins", e.Keys, e.Count)
	}),
	on(Rule{ID: "line/control-char", Severity: Warning, Since: "0.1.0",
		Title: "NUL or raw control characters inside a record",
		Doc:   "A raw control byte makes the line invalid JSON; an escaped NUL (\\u0000) is valid JSON but breaks databases and terminals that index or display the rollout (for example a NUL in a tool name).",
	}, func(reconstruct.LineControlCharEvidence) string {
		return "line holds a NUL or raw control character"
	}),
	on(Rule{ID: "line/oversized", Severity: Warning, Since: "0.1.0",
		Title:      "a line over --max-line-bytes: not parsed, kept",
		Doc:        "The line is longer than the configured maximum (default 64 MiB), so it was skipped unread and the checks that depend on it are incomplete. Raise --max-line-bytes to analyse it.",
		Incomplete: true,
	}, func(e reconstruct.LineOversizedEvidence) string {
		return fmt.Sprintf("line of %d bytes is over --max-line-bytes: kept, not analysed", e.Bytes)
	}),
	on(Rule{ID: "line/over-migration-limit", Severity: Warning, Since: "0.2.0",
		Title: "a record over 16 MiB in a legacy-mode file: Codex's paginated migration drops it (error for a compacted checkpoint)",
		Doc: "Codex 0.148 and later migrate legacy-mode rollouts to paginated history. The migration's reader (codex-rs/thread-store/src/local/rollout_migration.rs) drains any record over 16 MiB (16,777,216 bytes) to its newline and drops it before reading its type, and still reports the migration successful (openai/codex#37673; seen with 0.148.0-alpha.12 in #25215 and with 0.153.4 in #44141). Earlier versions have no migration and no such limit; paginated files are not migrated again. " +
			"A dropped compacted record is the worst case (error): it is the checkpoint resume starts from, so after migration the thread replays the history the compaction replaced and overflows its context window. Other records are lost from the history (warning): large tool outputs with inline images are the usual ones. " +
			"Keep a copy of the legacy file before opening the thread with a migrating Codex; a line over --max-line-bytes is reported too, with its type unknown.",
		context: severityBy(func(e reconstruct.RecordOverMigrationLimitEvidence, _ *reconstruct.State) Severity {
			if e.Checkpoint {
				return Error // resume replays the history the checkpoint replaced
			}
			return Warning
		}),
	}, func(e reconstruct.RecordOverMigrationLimitEvidence) string {
		switch {
		case e.Checkpoint:
			return fmt.Sprintf("compacted checkpoint of %d bytes is over Codex's %d-byte migration limit: migrating this legacy file to paginated history drops it, and resume then replays the history it replaced (context overflow)", e.Bytes, e.Limit)
		case e.Type == "":
			return fmt.Sprintf("line of %d bytes (not read: its type is unknown, it may be a compacted checkpoint) is over Codex's %d-byte migration limit: migrating this legacy file to paginated history drops it", e.Bytes, e.Limit)
		}
		return fmt.Sprintf("%v record of %d bytes is over Codex's %d-byte migration limit: migrating this legacy file to paginated history drops it", e.Type, e.Bytes, e.Limit)
	}),
	on(Rule{ID: "line/crlf", Severity: Info, Since: "0.1.0",
		Title: "a CRLF line ending",
		Doc:   "Codex writes LF. A CR before the newline usually means the file went through a Windows editor or a transfer in text mode. Readers tolerate it.",
		Fix:   "normalise to LF", OptIn: true,
		plan: normaliseEOL,
	}, func(reconstruct.LineCRLFEvidence) string {
		return "line ends with CRLF"
	}),
	on(Rule{ID: "line/blank", Severity: Info, Since: "0.1.0",
		Title: "a blank line",
		Doc:   "Readers skip blank lines; they are harmless but unusual in a file written by Codex.",
		Fix:   "move the line to FILE.quarantine.jsonl", OptIn: true,
		plan: dropLine,
	}, func(reconstruct.LineBlankEvidence) string {
		return "blank line"
	}),
}

// cutGlued moves the torn bytes of a glued line to quarantine and keeps its
// records, each on a line of its own.
func cutGlued(p *planner, f Finding, e reconstruct.LineGluedEvidence) string {
	p.add(f.Line, "cut", rollout.Edit{Kind: rollout.EditCut, Label: f.Rule})
	if len(e.Records) > 1 {
		p.addLineEdit(f.Line, "split", rollout.EditSplit, f.Rule)
	}
	return ""
}

// stripBOM removes the byte order mark before the first record; the
// rewriter strips it instead of quarantining it (rollout.ActionStripBOM).
func stripBOM(p *planner, f Finding, _ reconstruct.LineBOMEvidence) string {
	p.add(f.Line, "cut", rollout.Edit{Kind: rollout.EditCut, Label: f.Rule})
	return ""
}
