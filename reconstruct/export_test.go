package reconstruct

// The observation kinds the external tests name (the kinds are
// unexported: outside the package an observation is told by its evidence
// type).
var (
	HandoffAbandoned         = handoffAbandoned
	HandoffBadItems          = handoffBadItems
	HandoffDoubleDelivery    = handoffDoubleDelivery
	HandoffDuplicateDeferred = handoffDuplicateDeferred
	HandoffLostDeferred      = handoffLostDeferred
	HandoffOversized         = handoffOversized
	HandoffStaleDeferred     = handoffStaleDeferred
	ItemDuplicateID          = itemDuplicateID
	RecordOverMigrationLimit = recordOverMigrationLimit
	ToolOrphanOutput         = toolOrphanOutput
)
