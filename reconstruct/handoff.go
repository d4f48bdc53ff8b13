package reconstruct

import (
	"github.com/rollout-dev/rollout/rollout"
	"github.com/tidwall/gjson"
)

// handoff records the latest context_handoff record per id.
func (e *Engine) handoff(rec *rollout.Record, pos Pos, p gjson.Result) {
	id := p.Get("id").String()
	if id == "" {
		return
	}
	e.st.Handoffs[id] = &Handoff{ID: id, Line: pos.Line, Offset: pos.Offset, Raw: p.Raw}
}
