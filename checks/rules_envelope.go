package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
)

// The envelope of each line: {timestamp, type, payload}.
var envelopeRules = []*Rule{
	on(Rule{ID: "envelope/missing-field", Severity: Error, Since: "0.1.0",
		Title: "an envelope line without timestamp, type or payload",
		Doc:   "Every line of an envelope-era rollout is {timestamp, type, payload}: Codex's RolloutLine (codex-rs/protocol/src/protocol.rs) requires a string timestamp next to the flattened item, with no default. A line without one of the three, or with a timestamp that is not a string, does not deserialize: Codex skips it on resume and whatever it held is lost. rollout replays the rest of the file without it, as Codex does.",
	}, func(e reconstruct.EnvelopeMissingFieldEvidence) string {
		if e.Value != "" {
			return fmt.Sprintf("envelope field %q is %v, not a string: Codex cannot deserialize the line and drops it on resume", e.Field, e.Value)
		}
		return fmt.Sprintf("envelope line is missing %q: Codex cannot deserialize it and drops it on resume", e.Field)
	}),
	on(Rule{ID: "envelope/bad-timestamp", Severity: Warning, Since: "0.1.0",
		Title: "a timestamp string that is not RFC 3339 in UTC",
		Doc:   "Codex writes YYYY-MM-DDThh:mm:ss.mmmZ. Codex itself reads any string, but other forms break tools that sort or filter sessions by time. A line with no timestamp at all is envelope/missing-field.",
	}, func(e reconstruct.EnvelopeBadTimestampEvidence) string {
		return fmt.Sprintf("timestamp %v is not RFC 3339 UTC", e.Value)
	}),
	on(Rule{ID: "envelope/unknown-type", Severity: Info, Since: "0.1.0",
		Title: "a line type this version does not know (kept verbatim, counted)",
		Doc: "Newer Codex versions add line types. The line is kept byte for byte and counted; older Codex versions skip it on resume (every version from 0.40 to 0.171 skips a record of a type it does not know: the conformance corruption unknown-record-type). " +
			"Info in a file of a Codex version the rules were checked against, where no known record type is missing; a warning in a file of a newer version (meta/unchecked-version), where it is a record that version added and rollout cannot judge.",
		context: severityBy(func(_ reconstruct.EnvelopeUnknownTypeEvidence, st *reconstruct.State) Severity {
			if st != nil {
				if newer, _ := reconstruct.Unchecked(st.CLIVersion); newer {
					return Warning
				}
			}
			return Info
		}),
	}, func(e reconstruct.EnvelopeUnknownTypeEvidence) string {
		return fmt.Sprintf("unknown line type %q (kept verbatim)", e.Type)
	}),
}
