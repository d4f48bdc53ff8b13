package checks

import (
	"sort"
	"strings"
)

// Rule is the documented value behind a rule id. It feeds the SARIF rule
// list, `rollout explain` and the generated docs/checks.md.
type Rule struct {
	ID       string // area/name, never changes meaning once released
	Severity Severity
	Title    string // one line: what it detects
	Doc      string // a paragraph for a support engineer: why it matters, what to do
	Since    string // release that introduced it
	Fix      string // what repair does; empty when there is no fix
	OptIn    bool   // the fix runs only when named with --fix
}

// Fixable reports whether repair has a fix for the rule.
func (r *Rule) Fixable() bool { return r.Fix != "" }

// Area is the part of the id before the slash ("ordinal" for "ordinal/gap").
func (r *Rule) Area() string {
	area, _, _ := strings.Cut(r.ID, "/")
	return area
}

// Rules returns every registered rule sorted by id.
func Rules() []*Rule {
	out := make([]*Rule, len(registry))
	copy(out, registry)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup finds a rule by its exact id.
func Lookup(id string) (*Rule, bool) {
	for _, r := range registry {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}
