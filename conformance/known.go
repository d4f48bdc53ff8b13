package conformance

// Difference is a case where rollout's engine and Codex still disagree.
type Difference struct {
	// Why says what Codex does (its evidence is the golden's oracle) and
	// why the engine does not follow yet.
	Why   string
	Owner string // who fixes it, when another helper owns the rule
}

// KnownDifferences lists, by "VERSION/SCENARIO", the goldens where `rollout
// state` does not rebuild what Codex rebuilt. Each is also listed in
// docs/codex-replay.md. TestGoldens fails on a difference not listed here
// and on a listed one that has gone.
var KnownDifferences = map[string]Difference{
	"0.153.4/fork": forkLineage,
	"0.171.0/fork": forkLineage,
}

// forkLineage: `codex exec fork` writes a child rollout whose session_meta
// points at the parent (forked_from_id, history_base {thread_id,
// end_ordinal_exclusive, end_byte_offset}); on resume Codex rebuilds the
// parent's history up to that cutoff followed by the child's items, the
// engine replays the child file alone.
var forkLineage = Difference{
	Why: "a fork's child continues its parent's history up to history_base " +
		"(Codex rebuilds 15 items: the parent's 11 and the child's 4); the engine replays the child file alone (4 items)",
	Owner: "lineage (issue 23)",
}
