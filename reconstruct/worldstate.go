package reconstruct

import (
	"strings"

	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/tidwall/gjson"
)

func (e *Engine) worldState(pos Pos, p gjson.Result) {
	defer func() {
		e.emit(FlowWorldState, pos, map[string]any{"state": e.st.WorldState, "full": p.Get("full").Bool()})
	}()
	visible := e.sinceWS
	e.sinceWS = false
	state := p.Get("state")
	if !state.IsObject() {
		e.emit(WorldStateNotObject, pos, map[string]any{"json_type": state.Type.String()})
		return
	}
	v, err := mergepatch.ParseString(state.Raw)
	if err != nil {
		e.emit(WorldStateNotObject, pos, map[string]any{"error": err.Error()})
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
		e.emit(WorldStateDuplicateKey, pos, map[string]any{"keys": keys, "count": n})
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
			e.emit(WorldStateNullInSnapshot, pos, map[string]any{"paths": nulls})
		}
		e.st.WorldState = v
		e.afterCompact = false
		return
	}
	if !visible {
		e.emit(WorldStateOrder, pos, nil)
	}
	if e.st.WorldState == nil {
		e.emit(WorldStatePatchWithoutBaseline, pos, map[string]any{"after_compaction": e.afterCompact})
		return
	}
	if !mergepatch.Changes(e.st.WorldState, v) {
		e.emit(WorldStateEmptyPatch, pos, nil)
		return
	}
	e.st.WorldState = mergepatch.Apply(e.st.WorldState, v)
}
