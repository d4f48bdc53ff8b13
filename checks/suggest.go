package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/internal/base/suggest"
)

// UnknownRuleError is a rule selector (a rule id or an area "item/") that
// names no rule; Suggestions are the closest ones that do.
type UnknownRuleError struct {
	Selector    string
	Flag        string // the flag it came from ("--fix"), "" for an argument
	Suggestions []string
}

func (e *UnknownRuleError) Error() string {
	in := ""
	if e.Flag != "" {
		in = " in " + e.Flag
	}
	return fmt.Sprintf("unknown rule or area %q%s", e.Selector, in)
}

func unknownRule(sel, flag string) *UnknownRuleError {
	return &UnknownRuleError{Selector: sel, Flag: flag, Suggestions: Suggest(sel)}
}

// Suggest returns up to three rule ids or areas close to a selector that
// matches nothing: those a few typos away, and those ending with it
// ("missing-id" -> "item/missing-id").
func Suggest(sel string) []string {
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	seen := map[string]bool{}
	consider := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		d := suggest.Distance(sel, name)
		switch {
		case sel != "" && (strings.HasSuffix(name, "/"+sel) || strings.HasPrefix(name, sel)):
			cands = append(cands, cand{name, 0})
		case suggest.Near(d, len(sel)):
			cands = append(cands, cand{name, d})
		}
	}
	for _, r := range registry {
		consider(r.Area() + "/")
		consider(r.ID)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cands[:min(3, len(cands))] {
		out = append(out, c.name)
	}
	return out
}
