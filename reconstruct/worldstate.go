package reconstruct

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/rollout"
)

// worldState replays a world_state line: the state is parsed once,
// straight from the line, and no copy of the payload is made (a replay
// meets one such line per model step).
func (e *engine) worldState(pos Pos, rec *rollout.Record) {
	payload := rec.PayloadBytes()
	var fullRaw, state []byte
	rec.PayloadMembers(func(key []byte, start, end int) bool {
		switch string(key) {
		case "full":
			if fullRaw == nil {
				fullRaw = payload[start:end]
			}
		case "state":
			if state == nil {
				state = payload[start:end]
			}
		}
		return true
	})
	full := gjson.ParseBytes(fullRaw).Bool()
	defer func() {
		e.emit(pos, FlowWorldStateEvidence{State: e.st.WorldState, Full: full})
	}()
	visible := e.sinceWS
	e.sinceWS = false
	if len(state) == 0 || state[0] != '{' {
		e.emit(pos, WorldStateNotObjectEvidence{JSONType: gjson.ParseBytes(state).Type.String()})
		return
	}
	if !full && e.st.WorldState != nil {
		// The common case, a patch of a few members: merged straight from
		// its text; anything unusual takes the path below, which reports it.
		if next, changed, ok := mergepatch.MergeText(e.st.WorldState, state); ok {
			if !visible {
				e.emit(pos, WorldStateOrderEvidence{})
			}
			if !changed {
				e.emit(pos, WorldStateEmptyPatchEvidence{})
				return
			}
			e.st.WorldState = next
			return
		}
	}
	v, err := mergepatch.Parse(state)
	if err != nil {
		e.emit(pos, WorldStateNotObjectEvidence{Error: err.Error()})
		return
	}
	if n := v.DuplicateCount(); n > 0 {
		// Readers disagree on which value wins (gjson the first, Codex's
		// serde the last): report, never pick one silently.
		var keys []string
		for _, d := range v.Duplicates() {
			if len(keys) == 5 {
				break
			}
			keys = append(keys, d.Path+"/"+d.Key)
		}
		e.emit(pos, WorldStateDuplicateKeyEvidence{Keys: keys, Count: n})
	}
	if full {
		// Codex writes every top-level section, null when unset: only a
		// null inside a section is unusual.
		var nulls []string
		for _, p := range mergepatch.NullMembers(v) {
			if strings.Count(p, "/") > 1 {
				nulls = append(nulls, p)
			}
		}
		if len(nulls) > 0 {
			e.emit(pos, WorldStateNullInSnapshotEvidence{Paths: nulls})
		}
		e.st.WorldState = v
		e.afterCompact = false
		return
	}
	if !visible {
		e.emit(pos, WorldStateOrderEvidence{})
	}
	if e.st.WorldState == nil {
		e.emit(pos, WorldStatePatchWithoutBaselineEvidence{AfterCompaction: e.afterCompact})
		return
	}
	next, changed := mergepatch.Merge(e.st.WorldState, v)
	if !changed {
		e.emit(pos, WorldStateEmptyPatchEvidence{})
		return
	}
	e.st.WorldState = next
}
