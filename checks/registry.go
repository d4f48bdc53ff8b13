package checks

import "slices"

// registry lists every rule, area by area (docs/checks.md follows this
// order; Rules sorts by id). A rule lives in the file of its area,
// rules_AREA.go; a new area adds its list here.
var registry = slices.Concat(
	lineRules,
	envelopeRules,
	metaRules,
	lineageRules,
	ordinalRules,
	itemRules,
	toolRules,
	turnRules,
	rollbackRules,
	worldstateRules,
	compactionRules,
	agentcommRules,
	tokensRules,
	framesRules,
	handoffRules,
	homeRules,
)
