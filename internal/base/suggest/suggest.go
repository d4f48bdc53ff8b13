// Package suggest finds, for a name that matches nothing (a mistyped flag,
// config key or rule id), the valid names a few typos away: the one
// "did you mean" of every command. It is plumbing with no stage
// (internal/base) and imports nothing of the module.
package suggest

import (
	"cmp"
	"slices"
	"strings"
)

// Distance is the Levenshtein distance between two ASCII names.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Near reports whether a name d edits away from a word of length n is a
// plausible typo of it: two edits, or a quarter of a long word.
func Near(d, n int) bool { return d <= max(2, n/4) }

// Closest returns up to n candidates that are plausible typos of word,
// nearest first (ties in name order). "_" and "-" count as the same, so
// fail_on finds fail-on at distance 0.
func Closest(word string, candidates []string, n int) []string {
	type cand struct {
		name string
		dist int
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	w := norm(word)
	var cands []cand
	for _, c := range candidates {
		if c == word {
			continue
		}
		if d := Distance(w, norm(c)); Near(d, len(w)) {
			cands = append(cands, cand{c, d})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name)) })
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// Hint is the hint for word, which names none of candidates: "did you mean
// A or B? (help)" with the nearest n, each as show writes it ("--" + name
// for a flag), else help alone.
func Hint(word string, candidates []string, n int, show func(string) string, help string) string {
	near := Closest(word, candidates, n)
	if len(near) == 0 {
		return help
	}
	for i, name := range near {
		near[i] = show(name)
	}
	return "did you mean " + strings.Join(near, " or ") + "? (" + help + ")"
}
