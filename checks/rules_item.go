package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Item ids.
var itemRules = []*Rule{
	on(Rule{ID: "item/missing-id", Severity: Warning, Since: "0.1.0",
		Title: "a response item without id in a file that uses ids",
		Doc: "Once a thread uses item ids, every item Codex writes carries one, so an item without one was written by something else (a hand edit, a sync tool, another writer). " +
			"Codex resumes such a file unchanged and sends the item without an id: real Codex 0.142.5 to 0.171.0 resumed a turns3 rollout whose first assistant message lost its id, paginated or not, and the engine's rebuilt history matches theirs (conformance corruption `missing-id`). " +
			"Earlier releases of rollout reported it as an error in paginated files; Codex contradicts that. Files from before 2026 have no ids at all: that is normal and not reported.",
		Fix: "assign <prefix>_<uuidv7>",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemMissingIDEvidence) string {
			return assignID(p, f, e.ItemIndex, rollout.TypeResponseItem)
		}),
	}, func(e reconstruct.ItemMissingIDEvidence) string {
		return fmt.Sprintf("%v item has no id; expected %v_<uuidv7>", e.ItemType, e.Prefix)
	}),
	on(Rule{ID: "item/id-prefix-mismatch", Severity: Error, Since: "0.1.0",
		Title: "an id prefix that does not match the item type",
		Doc:   "The Responses API rejects it on resume (\"Expected an ID that begins with 'msg'\"), failing every later turn.",
		Fix:   "assign a fresh id with the right prefix",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemPrefixMismatchEvidence) string {
			return replaceID(p, f, e.ID, e.ItemIndex)
		}),
	}, func(e reconstruct.ItemPrefixMismatchEvidence) string {
		return fmt.Sprintf("%v id %v should start with %v_: the API rejects it on resume", e.ItemType, e.ID, e.WantPrefix)
	}),
	on(Rule{ID: "item/duplicate-id", Severity: Error, Since: "0.1.0",
		Title: "two different live items with one id",
		Doc:   "The API rejects a request whose input holds two items with one id. The same item repeated inside a compaction's replacement history is not a duplicate.",
		Fix:   "assign a fresh id to the later item",
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemDuplicateIDEvidence) string {
			return replaceID(p, f, e.ID, e.ItemIndex)
		}),
	}, func(e reconstruct.ItemDuplicateIDEvidence) string {
		return fmt.Sprintf("id %v is already used by a different item on line %d", e.ID, e.FirstLine)
	}),
	on(Rule{ID: "item/duplicate", Severity: Error, Since: "0.3.0",
		Title: "an item appended twice, byte for byte (warning for an item without id)",
		Doc: "The same item is in the live history twice: the same id and the same bytes, or, for a tool call or output without id, the same call_id and the same bytes; an item with neither (a message before 0.142, which wrote no ids) is a copy when its whole line, timestamp included, repeats the line just before it. A writer appended it twice (a retried append after a crash, a resume that wrote the history again, an exact duplicate line). Codex rebuilds the history with both copies and sends them: with an id the Responses API rejects every later request (\"Duplicate item found with id ... Remove duplicate items from your input\"), so the thread cannot continue (error); without an id the model sees the call or output twice (warning). " +
			"It is one call for the pairing: Codex's normalize step (ensure_call_outputs_present and remove_orphan_outputs, codex-rs/core/src/context_manager/normalize.rs at rust-v0.147.0) pairs calls and outputs by call_id, so the copy of an answered call is answered too, and neither tool/orphan-call nor tool/duplicate-call-id is reported for it. An item that reuses an id with other content is item/duplicate-id.",
		Fix:  "move the later copy's line to FILE.quarantine.jsonl (nothing is lost: the first copy stays)",
		plan: withEvidence(dropDuplicate),
		context: severityBy(func(e reconstruct.ItemDuplicateEvidence, _ *reconstruct.State) Severity {
			if e.ID != "" {
				return Error
			}
			return Warning
		}),
	}, func(e reconstruct.ItemDuplicateEvidence) string {
		if e.ID != "" {
			return fmt.Sprintf("%v %v repeats the item on line %d byte for byte: Codex sends both and the API rejects every request (\"Duplicate item found with id\")", e.ItemType, e.ID, e.FirstLine)
		}
		if e.CallID == "" {
			return fmt.Sprintf("%v line repeats line %d byte for byte: Codex sends the item twice", e.ItemType, e.FirstLine)
		}
		return fmt.Sprintf("%v for call_id %v repeats the one on line %d byte for byte: Codex sends it twice", e.ItemType, e.CallID, e.FirstLine)
	}),
	on(Rule{ID: "item/rejected-id", Severity: Error, Since: "0.3.0",
		Title: "an item id the Responses API rejects: empty, unprefixed, over 64 characters or with other characters (warning where this Codex version does not send it)",
		Doc: "The Responses API rejects an input item whose id is empty (`Invalid 'input[5].id': ''`), longer than 64 characters, made of characters other than letters, digits, `_` and `-` (`review:rollout:user`, openai/codex#9360), or without the prefix its type expects (a bare UUID on a message: \"Expected an ID that begins with 'msg'\", openai/codex#32282, #33176; hook-injected UUIDv7 ids, #27928). The request fails and so does every later one, since the history keeps the item. " +
			"What breaks depends on the Codex version that resumes the file (judged by its cli_version). Before 0.142 item ids are neither written nor sent: ResponseItem's id fields are skip_serializing (codex-rs/protocol/src/models.rs at rust-v0.114.0), and only the Azure endpoint with store sends non-empty ones (attach_item_ids) (warning). From 0.142 (openai/codex#28814, f00f93d8c0; on by default from 0.146, #34645) ids are written and every one is sent (error). From 0.145 (openai/codex#32312, c9d52de5ca) prepare_response_items_for_request (codex-rs/core/src/client.rs) leaves empty and unprefixed ids out of the request, so those are harmless there (warning) but still break 0.142-0.144 and Desktop builds of July 2026 (26.707); a prefixed id that is too long or has other characters is sent by every version from 0.142 on (error). " +
			"The same id inside a compaction's replacement_history is sent too: it is reported where it is.",
		Fix: "assign a fresh id with the right prefix (the old one stays in the backup)", OptIn: true,
		plan: withEvidence(func(p *planner, f Finding, e reconstruct.ItemRejectedIDEvidence) string {
			return freshID(p, f, e.ID, e.ItemIndex)
		}),
		context: severityBy(func(e reconstruct.ItemRejectedIDEvidence, _ *reconstruct.State) Severity {
			if e.Sent != nil && *e.Sent {
				return Error
			}
			return Warning
		}),
	}, rejectedIDMessage),
	on(Rule{ID: "item/bad-uuidv7", Severity: Warning, Since: "0.1.0",
		Title: "a locally formed id whose UUID is not a valid version 7",
		Doc:   "Locally assigned ids are <prefix>_<uuidv7>; another version or variant means the id was not made by Codex.",
	}, func(e reconstruct.ItemBadUUIDv7Evidence) string {
		return fmt.Sprintf("id %v: %v", e.ID, e.Reason)
	}),
}

// dropDuplicate moves the later copy of an item appended twice to
// quarantine: the whole line when it holds only that item, else the one
// object (a concatenated line). The first copy is what stays.
func dropDuplicate(p *planner, f Finding, e reconstruct.ItemDuplicateEvidence) string {
	switch {
	case e.ItemIndex >= 0:
		return "the copy is inside a compaction's replacement history"
	case e.FirstLine == f.Line:
		return "both copies are on one line"
	}
	id, callID, typ := e.ID, e.CallID, e.ItemType
	envelope := p.envelope
	p.add(f.Line, "duplicate:"+id+":"+callID, rollout.Edit{Kind: rollout.EditDrop, Label: f.Rule, Match: func(obj []byte) bool {
		item := obj
		if envelope {
			item = member(obj, "payload")
			if typ == rollout.TypeInterAgent {
				return stringIs(member(obj, "type"), typ) && rollout.DecodeString(member(item, "id")) == id
			}
			if !stringIs(member(obj, "type"), rollout.TypeResponseItem) {
				return false
			}
		}
		if !stringIs(member(item, "type"), typ) {
			return false
		}
		if id != "" {
			return rollout.DecodeString(member(item, "id")) == id
		}
		return rollout.DecodeString(member(item, "call_id")) == callID
	}})
	return ""
}

func rejectedIDMessage(e reconstruct.ItemRejectedIDEvidence) string {
	what := fmt.Sprintf("%v id %q (%s)", e.ItemType, e.ID, strings.Join(e.Reasons, ", "))
	sends, strips := release(reconstruct.QuirkSendsItemIDs), release(reconstruct.QuirkStripsBadIDs)
	switch {
	case e.Sent == nil:
		return what + ": the Responses API rejects it where Codex sends it (" + sends + " and later; " + strips + " and later leave out empty and unprefixed ids)"
	case *e.Sent:
		return what + ": Codex " + e.CLIVersion + " sends it and the Responses API rejects every request"
	case e.Stripped && stripsBadIDs(e.CLIVersion):
		return what + ": Codex " + e.CLIVersion + " leaves it out of requests, but " + sends + "-" + lastBefore(reconstruct.QuirkStripsBadIDs) + " (and Desktop builds of that time) send it and the API rejects it"
	}
	return what + ": Codex " + e.CLIVersion + " does not send item ids (but to Azure with store); from " + sends + " on Codex sends it and the API rejects it"
}

// release is the first release of a quirk as messages name it: "0.145".
func release(id reconstruct.QuirkID) string {
	v := reconstruct.Since(id)
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// lastBefore is the minor release before a quirk's first: "0.144".
func lastBefore(id reconstruct.QuirkID) string {
	v := reconstruct.Since(id)
	return fmt.Sprintf("%d.%d", v.Major, v.Minor-1)
}

// stripsBadIDs: the version leaves empty and unprefixed ids out of
// requests (reconstruct.QuirkStripsBadIDs); unknown versions are not
// taken to.
func stripsBadIDs(cliVersion string) bool {
	yes, ok := reconstruct.Has(reconstruct.QuirkStripsBadIDs, cliVersion)
	return yes || !ok
}
