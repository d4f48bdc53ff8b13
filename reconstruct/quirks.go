package reconstruct

import (
	"fmt"

	"github.com/rollout-dev/rollout/rollout"
)

// The Codex version quirks the engine knows: what Codex does with a rollout
// changes with the version that wrote it (its session_meta cli_version),
// and each such boundary is one row here, with what changes and where
// Codex does it. The engine and the rules read their boundaries from this
// table, never from a literal of their own; a new quirk is a row (and its
// QuirkID), then the code that asks Since or Has. docs/codex-replay.md
// lists the rows (a test holds it to the table).

// QuirkID names a row of the quirks table.
type QuirkID string

// The rows of the table.
const (
	QuirkAnswersOrphanCalls QuirkID = "answers-orphan-calls"
	QuirkNormalizeStep      QuirkID = "normalize-step"
	QuirkNoLegacyBridge     QuirkID = "no-legacy-bridge"
	QuirkReverseReplay      QuirkID = "reverse-replay"
	QuirkReadsInterAgent    QuirkID = "reads-inter-agent"
	QuirkSendsItemIDs       QuirkID = "sends-item-ids"
	QuirkSendsIDsByDefault  QuirkID = "sends-item-ids-by-default"
	QuirkReadsWorldState    QuirkID = "reads-world-state"
	QuirkStripsBadIDs       QuirkID = "strips-bad-ids"
	QuirkNewlineBeforeTorn  QuirkID = "newline-before-torn-tail"
	QuirkReadsRiskScore     QuirkID = "reads-security-risk-score"
	QuirkReadsUsageRecords  QuirkID = "reads-usage-records"
	QuirkReadsDynamicTools  QuirkID = "reads-dynamic-tools-updated"
	QuirkReadsIDAllocation  QuirkID = "reads-id-allocation"
)

// Quirk is one row: from Since on Codex does After; before it, Before.
type Quirk struct {
	ID     QuirkID
	Since  rollout.Version
	Before string
	After  string
	// LineTypes are the line types the quirk is about, for the rows that
	// say from which version a line type is read.
	LineTypes []string
	// Source is where Codex does it (file, function, PR, commit, tag) or
	// how it was measured (the conformance harness).
	Source string
}

// quirks is the table, oldest boundary first.
var quirks = []Quirk{
	{ID: QuirkAnswersOrphanCalls, Since: rollout.Version{Minor: 2},
		Before: "a call left without output is sent as it is",
		After:  "every call of the prompt without an output gets an \"aborted\" output before each request",
		Source: "run_turn's missing_calls, codex-rs/core/src/codex.rs, in every numbered Rust release from rust-v0.2.0 (June 2025)"},
	{ID: QuirkNormalizeStep, Since: rollout.Version{Minor: 48},
		Before: "the aborted output of a call is a custom_tool_call_output in front of the history, and an output without its call is sent (the API rejects the request)",
		After:  "the normalize step inserts the aborted output after its call, of the call's own kind, and drops an output whose call is not in the history",
		Source: "ContextManager normalize: ensure_call_outputs_present and remove_orphan_outputs, codex-rs/core/src/context_manager/normalize.rs; openai/codex#5473 (273819aaae), first in rust-v0.48.0; 0.40.0 measured in internal/testkit/conformance/testdata/0.40.0/corrupt/orphan-call"},
	{ID: QuirkNoLegacyBridge, Since: rollout.Version{Minor: 55},
		Before: "a legacy compaction (no replacement_history) resumes as one bridge message: \"You were originally given instructions from a user ...\", the prompts, then the summary",
		After:  "it resumes as the kept prompts plus the summary",
		Source: "measured with the conformance harness: 0.40.0, 0.47.0, 0.50.0 and 0.53.0 bridge, 0.55.0 (the next npm release) and later do not"},
	{ID: QuirkReverseReplay, Since: rollout.Version{Minor: 107},
		Before: "a forward replay applies a compaction, then a rollback, to what it left",
		After:  "resume scans back to the newest surviving compaction and replays the suffix of a compaction it meets before it knows the turn holding it is rolled back",
		Source: "Session::reconstruct_history_from_rollout, openai/codex#12612 (695957a348), rust-v0.107.0; the bug is openai/codex#32851 (open)"},
	{ID: QuirkReadsInterAgent, Since: rollout.Version{Minor: 140},
		Before: "inter-agent records do not deserialize (skipped on resume)", After: "they are read",
		LineTypes: []string{rollout.TypeInterAgent, rollout.TypeInterAgentMeta},
		Source:    "RolloutItem, codex-rs/protocol/src/protocol.rs; 8f2d6416ce, released in 0.140"},
	{ID: QuirkSendsItemIDs, Since: rollout.Version{Minor: 142},
		Before: "item ids are neither persisted nor sent (ResponseItem's id fields are skip_serializing; only the Azure endpoint with store attaches non-empty ones)",
		After:  "item ids are persisted and every one is sent, so the Responses API rejects a request with an id of a shape it refuses",
		Source: "codex-rs/protocol/src/models.rs at rust-v0.114.0; openai/codex#28814 (f00f93d8c0), behind the item_ids feature (on in Desktop builds) until #34645 made it the default: sends-item-ids-by-default"},
	{ID: QuirkReadsWorldState, Since: rollout.Version{Minor: 143},
		Before: "world_state records do not deserialize (skipped on resume)", After: "they are read",
		LineTypes: []string{rollout.TypeWorldState},
		Source:    "RolloutItem, codex-rs/protocol/src/protocol.rs; fa036d39aa, released in 0.143"},
	{ID: QuirkStripsBadIDs, Since: rollout.Version{Minor: 145},
		Before: "every item id is sent",
		After:  "an empty or unprefixed id is left out of the request; a prefixed one is still sent as it is",
		Source: "prepare_response_items_for_request, codex-rs/core/src/client.rs; openai/codex#32312 (c9d52de5ca)"},
	{ID: QuirkNewlineBeforeTorn, Since: rollout.Version{Minor: 145},
		Before: "an append to a file whose last line is torn is glued to the torn fragment (the line and the record after it are lost)",
		After:  "Codex starts a new line before appending and resumes without the torn fragment",
		Source: "measured with the conformance harness (internal/testkit/conformance/testdata/*/corrupt/torn-tail.json, bisected by hand runs): 0.40 to 0.144.6 glue, 0.145.0, 0.147, 0.153.4 and 0.171 start a new line"},
	{ID: QuirkSendsIDsByDefault, Since: rollout.Version{Minor: 146},
		Before: "the CLI sends no item ids unless the item_ids feature is on",
		After:  "it sends them by default (the item_ids feature on)",
		Source: "openai/codex#34645; measured with the conformance harness: 0.142.5, 0.144.6 and 0.145.0 send no ids on resume, 0.147.0 and later send them (the goldens' oracle.input)"},
	{ID: QuirkReadsRiskScore, Since: rollout.Version{Minor: 148},
		Before: "security_risk_score records do not deserialize (skipped on resume)", After: "they are read",
		LineTypes: []string{rollout.TypeSecurityRiskScore},
		Source:    "RolloutItem, codex-rs/protocol/src/protocol.rs; 72fa74fbc9, released in 0.148"},
	{ID: QuirkReadsUsageRecords, Since: rollout.Version{Minor: 150},
		Before: "token_usage_record, retained_context and realtime_item records do not deserialize (skipped on resume)", After: "they are read",
		LineTypes: []string{rollout.TypeTokenUsageRecord, rollout.TypeRetainedContext, rollout.TypeRealtimeItem},
		Source:    "newer than rust-v0.149.0-alpha.3 (rebroad/codex mirror), the newest source read; taken as 0.150's"},
	{ID: QuirkReadsDynamicTools, Since: rollout.Version{Minor: 166},
		Before: "dynamic_tools_updated records do not deserialize (skipped on resume)", After: "they are read",
		LineTypes: []string{rollout.TypeDynamicToolsUpdated},
		Source:    "the RolloutItem tag run of the npm binaries (strings): first in 0.166.0, absent from 0.165.0; internal/testkit/drift"},
	{ID: QuirkReadsIDAllocation, Since: rollout.Version{Minor: 171},
		Before: "id_allocation records do not deserialize (skipped on resume)", After: "they are read",
		LineTypes: []string{rollout.TypeIDAllocation},
		Source:    "the RolloutItem tag run of the npm binaries (strings): first in 0.171.0 (npm has no 0.170), absent from 0.169.1; internal/testkit/drift"},
}

// CheckedOldest and CheckedNewest are the range of Codex versions the
// replay and the rules were checked against: the oldest and the newest
// version of the conformance goldens (internal/testkit/conformance/
// testdata/VERSION; a test holds both to those directories). A file of a
// later minor release is meta/unchecked-version: records that version
// added may be unknown here. Checking a new release is this line plus its
// goldens (make conformance VERSIONS=...; make drift VERSION=... first).
var CheckedOldest, CheckedNewest = rollout.Version{Minor: 40}, rollout.Version{Minor: 171}

// Unchecked reports whether Codex cliVersion is a minor release after
// CheckedNewest. Patch releases of a checked minor count as checked: the
// goldens are made per minor. ok is false when cliVersion does not parse.
func Unchecked(cliVersion string) (newer, ok bool) {
	v, ok := rollout.ParseVersion(cliVersion)
	if !ok {
		return false, false
	}
	minor := rollout.Version{Major: v.Major, Minor: v.Minor}
	return CheckedNewest.Less(minor), true
}

// Quirks is a copy of the table.
func Quirks() []Quirk { return append([]Quirk(nil), quirks...) }

// Since is the first version of quirk id. It panics for an id not in the
// table, a bug.
func Since(id QuirkID) rollout.Version {
	for _, q := range quirks {
		if q.ID == id {
			return q.Since
		}
	}
	panic(fmt.Sprintf("reconstruct: quirk %q is not in the table", id))
}

// Has reports whether Codex cliVersion behaves as quirk id says from its
// Since on; ok is false when cliVersion does not parse (unknown).
func Has(id QuirkID, cliVersion string) (yes, ok bool) {
	v, ok := rollout.ParseVersion(cliVersion)
	if !ok {
		return false, false
	}
	return v.AtLeast(Since(id)), true
}

// lineTypeSince is the first Codex version that reads each line type the
// envelope era added after the first ones (session_meta, response_item,
// compacted, turn_context and event_msg are read by every version), from
// the table's LineTypes rows. A type missing here and from rollout's own
// list is read by none.
var lineTypeSince = func() map[string]rollout.Version {
	m := map[string]rollout.Version{}
	for _, q := range quirks {
		for _, t := range q.LineTypes {
			m[t] = q.Since
		}
	}
	return m
}()
