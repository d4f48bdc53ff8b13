package reconstruct

import (
	"strings"

	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/tidwall/gjson"
)

func (e *engine) worldState(pos Pos, p gjson.Result) {
	defer func() {
		e.emit(pos, FlowWorldStateEvidence{State: e.st.WorldState, Full: p.Get("full").Bool()})
	}()
	visible := e.sinceWS
	e.sinceWS = false
	state := p.Get("state")
	if !state.IsObject() {
		e.emit(pos, WorldStateNotObjectEvidence{JSONType: state.Type.String()})
		return
	}
	v, err := mergepatch.ParseString(state.Raw)
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
	if p.Get("full").Bool() {
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
	if !mergepatch.Changes(e.st.WorldState, v) {
		e.emit(pos, WorldStateEmptyPatchEvidence{})
		return
	}
	e.st.WorldState = mergepatch.Apply(e.st.WorldState, v)
}
