package checks

import (
	"fmt"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// normalizingSince is the first Codex release taken to normalize the history
// before every request: ContextManager's normalize step
// (codex-rs/core/src/context_manager/normalize.rs: ensure_call_outputs_present
// inserts an "aborted" output after a call without one,
// remove_orphan_outputs drops an output without its call). It came with
// openai/codex#5473 (merged 2025-10-21, between 0.47 and 0.50); 0.50.0 is
// the conservative boundary: a file in between is judged by the older rule.
var normalizingSince = rollout.Version{Major: 0, Minor: 50}

// idleDead is how long a file must have been left unwritten for an
// unanswered call of its open last turn to count as abandoned rather than
// running. Tool calls rarely run longer than this.
const idleDead = 3600

// withEra adds to the facts of an orphan whether the file's Codex version
// normalizes the history ("normalized": true/false) or is unknown (absent).
func withEra(facts map[string]any, st *reconstruct.State) map[string]any {
	out := make(map[string]any, len(facts)+2)
	for k, v := range facts {
		out[k] = v
	}
	switch {
	case st.Era == rollout.EraBare:
		out["normalized"] = false // mid 2025, before 0.4x
	default:
		if v, ok := rollout.ParseVersion(st.CLIVersion); ok {
			out["normalized"] = v.AtLeast(normalizingSince)
			out["cli_version"] = st.CLIVersion
		}
	}
	return out
}

// sessionStopped reports whether the file was last written long enough
// before --now for the session to be over.
func sessionStopped(f map[string]any) bool {
	idle, ok := f["idle_seconds"].(int64)
	return ok && idle >= idleDead
}

func orphanCallMsg(f map[string]any) string {
	what := fmt.Sprintf("%v %v has no output", f["item_type"], f["call_id"])
	if f["in_open_turn"] == true {
		idle, _ := f["idle_seconds"].(int64)
		switch {
		case idle < 0:
			what += " in the last turn, which has not ended (in progress, or the session died: no --now to tell)"
		case idle < idleDead:
			return what + fmt.Sprintf(" in the last turn; the file was written %s ago: the tool may still be running", ago(idle))
		default:
			what += fmt.Sprintf(" and the session stopped %s ago", ago(idle))
		}
	}
	if f["normalized"] == false {
		return what + ": this Codex version sends it as is and the API rejects every request (\"No tool output found\")"
	}
	return what + ": Codex sends it with an \"aborted\" output on resume, so the model believes the call was aborted"
}

func orphanOutputMsg(f map[string]any) string {
	what := fmt.Sprintf("%v for call_id %v has no call", f["item_type"], f["call_id"])
	if f["normalized"] == false {
		return what + ": this Codex version sends it and the API rejects every request (\"No tool call found\")"
	}
	return what + ": Codex drops it before every request (and logs an error)"
}

// ago says a number of seconds the way a person reads it.
func ago(s int64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%d s", s)
	case s < 2*3600:
		return fmt.Sprintf("%d min", s/60)
	case s < 2*86400:
		return fmt.Sprintf("%d h", s/3600)
	}
	return fmt.Sprintf("%d days", s/86400)
}
