package reconstruct

// A lineage (lineage.go): what is wrong with the rollouts a paginated fork
// or revert continues. Each is observed at the file's session_meta. Via is
// the rollout whose history_base is at fault when it is not the file's own
// ("" then): the file inherits the fault from a rollout it continues.
// Source is the rollout the faulty history_base names (its path when it
// was found, else its rollout id).

// LineageMissingSourceEvidence: no rollout of the home has the rollout id
// history_base.thread_id names.
type LineageMissingSourceEvidence struct {
	RolloutID string `json:"rollout_id"`
	Via       string `json:"via,omitempty"`
}

// LineageCycleEvidence: following history_base comes back to a rollout
// already on the chain.
type LineageCycleEvidence struct {
	RolloutID string `json:"rollout_id"`
	Via       string `json:"via,omitempty"`
	// NameLostRollout: the file names itself, and its name carries no
	// _<rollout> suffix: a reverted thread's file renamed to its thread id,
	// which is the id its history_base names.
	NameLostRollout bool `json:"name_lost_rollout_id,omitempty"`
}

// LineageOtherThreadEvidence: a rollout the file continues carries, in its
// session_meta, another thread's id than its file name.
type LineageOtherThreadEvidence struct {
	Source     string `json:"source"`
	NameThread string `json:"name_thread"`
	MetaThread string `json:"meta_thread"`
	Via        string `json:"via,omitempty"`
}

// LineageNotPaginatedEvidence: the source's history_mode is not paginated.
type LineageNotPaginatedEvidence struct {
	Source      string `json:"source"`
	HistoryMode string `json:"history_mode"`
	Via         string `json:"via,omitempty"`
}

// LineageCutoffIncludesMetaEvidence: history_base.end_ordinal_exclusive is
// 0, a cutoff before the source's own session_meta.
type LineageCutoffIncludesMetaEvidence struct {
	Source string `json:"source"`
	Via    string `json:"via,omitempty"`
}

// LineageCutoffPastEndEvidence: history_base.end_byte_offset lies past the
// end of the source (Size bytes, decompressed).
type LineageCutoffPastEndEvidence struct {
	Source string `json:"source"`
	Offset int64  `json:"end_byte_offset"`
	Size   int64  `json:"size"`
	Via    string `json:"via,omitempty"`
}

// LineageCutoffOffBoundaryEvidence: history_base.end_byte_offset falls
// inside the source's line Line (Cut bytes into it, Dropped true: the
// record is not replayed), or on a line boundary where the next ordinal
// (Next: the ordinal of the record there, or one past the last record's
// at the end of the source) is not end_ordinal_exclusive (Want).
type LineageCutoffOffBoundaryEvidence struct {
	Source  string `json:"source"`
	Offset  int64  `json:"end_byte_offset"`
	Line    int    `json:"line,omitempty"`
	Cut     int64  `json:"cut,omitempty"`
	Want    int64  `json:"end_ordinal_exclusive"`
	Next    *int64 `json:"next_ordinal,omitempty"`
	Dropped bool   `json:"dropped,omitempty"`
	Via     string `json:"via,omitempty"`
}

// LineageMalformedBaseEvidence: session_meta.history_base is not an object
// with a rollout id and two non-negative integers (Field names the first
// that is wrong).
type LineageMalformedBaseEvidence struct {
	Field string `json:"field"`
	Via   string `json:"via,omitempty"`
}

var (
	lineageMissingSource      = newKind()
	lineageCycle              = newKind()
	lineageOtherThread        = newKind()
	lineageNotPaginated       = newKind()
	lineageCutoffIncludesMeta = newKind()
	lineageCutoffPastEnd      = newKind()
	lineageCutoffOffBoundary  = newKind()
	lineageMalformedBase      = newKind()
)

func (LineageMissingSourceEvidence) Kind() Kind      { return lineageMissingSource }
func (LineageCycleEvidence) Kind() Kind              { return lineageCycle }
func (LineageOtherThreadEvidence) Kind() Kind        { return lineageOtherThread }
func (LineageNotPaginatedEvidence) Kind() Kind       { return lineageNotPaginated }
func (LineageCutoffIncludesMetaEvidence) Kind() Kind { return lineageCutoffIncludesMeta }
func (LineageCutoffPastEndEvidence) Kind() Kind      { return lineageCutoffPastEnd }
func (LineageCutoffOffBoundaryEvidence) Kind() Kind  { return lineageCutoffOffBoundary }
func (LineageMalformedBaseEvidence) Kind() Kind      { return lineageMalformedBase }
