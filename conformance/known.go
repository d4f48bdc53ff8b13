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
var KnownDifferences = map[string]Difference{}
