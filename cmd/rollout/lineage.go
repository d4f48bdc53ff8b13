package main

import (
	"slices"

	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/reconstruct"
)

// lineages resolves the lineages of a command's rollouts (docs/lineage.md):
// among its inputs and in the Codex home of each, and keeps the notes of
// the chains it could not follow (lineage.Resolver).
type lineages struct {
	r    *lineage.Resolver
	hint string // what a note adds: the consequence and what to do
}

// lineagesOf indexes the inputs of a command that reads many rollouts
// (all of them, before --shard took its part).
func lineagesOf(in *verifyInputs) *lineages {
	ix := in.index
	if ix == nil {
		ix = lineage.New(in.all)
	}
	return &lineages{r: lineage.NewResolver(ix),
		hint: "the findings that need the inherited history were not made; name the directory that holds that rollout, or the Codex home"}
}

// lineagesOfFile indexes for a command that reads one rollout
// (lineage.ForFile).
func lineagesOfFile(path string) *lineages {
	return &lineages{r: lineage.NewResolver(lineage.ForFile(path)),
		hint: "what is shown is the file's own part; put that rollout beside the file, or read the file in its Codex home"}
}

// ancestry resolves the lineage of the rollout at path (checks.Options.Lineage,
// replayOptions): safe for concurrent use.
func (l *lineages) ancestry(path string) *reconstruct.Ancestry { return l.r.Ancestry(path) }

// Notes are the chains not followed, each with the hint, sorted.
func (l *lineages) Notes() []string {
	out := l.r.Notes()
	for i, n := range out {
		out[i] = n + "; " + l.hint
	}
	slices.Sort(out)
	return out
}

// sayNotes prints the notes on standard error, for a command whose output
// is not a report.
func (l *lineages) sayNotes(a *app) {
	for _, n := range l.Notes() {
		notef(a.io.Err, "%s", n)
	}
}
