package reconstruct

// A Codex home: what its SQLite databases, writer locks and migration
// leftovers say against its rollout files (the home package observes them;
// no replay does). Paths are as found: absolute, as Codex stores them.

// HomeRowFileMissingEvidence: a threads row whose rollout_path names no
// file. FoundAt is the thread's rollout found by name in the home, if any.
type HomeRowFileMissingEvidence struct {
	ThreadID    string `json:"thread_id"`
	RolloutPath string `json:"rollout_path"`
	FoundAt     string `json:"found_at,omitempty"`
}

// HomeRowOutsideHomeEvidence: a threads row whose rollout_path lies outside
// the home (the home was copied or moved). FoundAt as above.
type HomeRowOutsideHomeEvidence struct {
	ThreadID    string `json:"thread_id"`
	RolloutPath string `json:"rollout_path"`
	Home        string `json:"home"`
	FoundAt     string `json:"found_at,omitempty"`
}

// HomeRowOtherThreadEvidence: the file a threads row names belongs to
// another thread (its session_meta id), or another row names it too.
type HomeRowOtherThreadEvidence struct {
	ThreadID    string `json:"thread_id"`
	RolloutPath string `json:"rollout_path"`
	FileThread  string `json:"file_thread"`
	FoundAt     string `json:"found_at,omitempty"`
}

// HomeRolloutWithoutRowEvidence: a rollout whose thread has no threads row.
type HomeRolloutWithoutRowEvidence struct {
	ThreadID string `json:"thread_id"`
	// NoMeta: the file has no session_meta (an empty file), so resuming
	// it cannot write the row back.
	NoMeta bool `json:"no_meta,omitempty"`
}

// HomeHistoryModeMismatchEvidence: threads.history_mode differs from the
// file's session_meta history_mode.
type HomeHistoryModeMismatchEvidence struct {
	ThreadID string `json:"thread_id"`
	Row      string `json:"row"`
	File     string `json:"file"`
}

// HomeArchivedMismatchEvidence: threads.archived differs from the directory
// the file is in.
type HomeArchivedMismatchEvidence struct {
	ThreadID string `json:"thread_id"`
	Archived bool   `json:"archived"` // the row's flag
	Dir      string `json:"dir"`      // sessions or archived_sessions
}

// The projection evidence: ThreadID is the projection's key (the
// thread_id column of the projection tables), the rollout id of the file
// it was compared with. BelongsTo names another rollout of the thread
// whose end the cursor is (its size, and the ordinal after its last
// record): the cursor was carried over from that file.

// HomeProjectionPastEOFEvidence: the projection cursor lies past the end
// of the file.
type HomeProjectionPastEOFEvidence struct {
	ThreadID  string `json:"thread_id"`
	Cursor    int64  `json:"cursor"`
	Size      int64  `json:"size"`
	BelongsTo string `json:"belongs_to,omitempty"` // the other rollout whose end the cursor is
}

// HomeProjectionOffBoundaryEvidence: the cursor falls inside a line.
type HomeProjectionOffBoundaryEvidence struct {
	ThreadID  string `json:"thread_id"`
	Cursor    int64  `json:"cursor"`
	LineStart int64  `json:"line_start"`
	BelongsTo string `json:"belongs_to,omitempty"` // the other rollout whose end the cursor is
}

// HomeProjectionOrdinalEvidence: the ordinal the cursor expects next is not
// the ordinal of the record at the cursor (or after the last record).
type HomeProjectionOrdinalEvidence struct {
	ThreadID  string `json:"thread_id"`
	Cursor    int64  `json:"cursor"`
	Expected  int64  `json:"expected"`             // next_rollout_ordinal
	Found     *int64 `json:"found"`                // the file's; null when the record has none
	BelongsTo string `json:"belongs_to,omitempty"` // the other rollout whose end the cursor is
}

// HomeProjectedItemMismatchEvidence: a thread_items row whose ordinal
// names a record that does not carry the item, or no record at all.
type HomeProjectedItemMismatchEvidence struct {
	ThreadID   string `json:"thread_id"`
	ItemID     string `json:"item_id"`
	ItemType   string `json:"item_type"`
	Ordinal    int64  `json:"ordinal"`
	RecordType string `json:"record_type"` // "" when no record has the ordinal
}

// HomeWriterLockHeldEvidence: a thread's writer lock is held; PID is the
// one the lock file names (0: none), Alive whether it runs.
type HomeWriterLockHeldEvidence struct {
	ThreadID string `json:"thread_id"`
	PID      int    `json:"pid"`
	Alive    bool   `json:"alive"`
}

// HomeWriterLockStaleEvidence: a writer lock file nobody holds.
type HomeWriterLockStaleEvidence struct {
	ThreadID string `json:"thread_id"`
	PID      int    `json:"pid"`
	Alive    bool   `json:"alive"`
}

// HomeMigrationPendingEvidence: a migration journal left by a migration
// that published the paginated file and did not finish its SQLite state.
type HomeMigrationPendingEvidence struct {
	ThreadID string `json:"thread_id"`
}

// HomeMigrationStagedEvidence: a migration's staged copy left beside a
// rollout. Rollout is the file it stages ("" when that is gone).
type HomeMigrationStagedEvidence struct {
	Rollout string `json:"rollout"`
	Bytes   int64  `json:"bytes"`
}

// HomeAttachedParentMissingEvidence: a threads row attached to a thread
// (attached_thread_parent_id) that has no row. ParentRollout is a rollout
// of that thread in the home, if any.
type HomeAttachedParentMissingEvidence struct {
	ThreadID      string `json:"thread_id"`
	Parent        string `json:"parent"`
	ParentRollout string `json:"parent_rollout,omitempty"`
}

// HomeAttachedCycleEvidence: following attached_thread_parent_id from a
// thread leads back to it. Cycle lists the threads in edge order, from
// ThreadID (the least id of the cycle).
type HomeAttachedCycleEvidence struct {
	ThreadID string   `json:"thread_id"`
	Cycle    []string `json:"cycle"`
}

var (
	homeAttachedParentMissing = newKind()
	homeAttachedCycle         = newKind()
	homeRowFileMissing        = newKind()
	homeRowOutsideHome        = newKind()
	homeRowOtherThread        = newKind()
	homeRolloutWithoutRow     = newKind()
	homeHistoryModeMismatch   = newKind()
	homeArchivedMismatch      = newKind()
	homeProjectionPastEOF     = newKind()
	homeProjectionOffBoundary = newKind()
	homeProjectionOrdinal     = newKind()
	homeProjectedItemMismatch = newKind()
	homeWriterLockHeld        = newKind()
	homeWriterLockStale       = newKind()
	homeMigrationPending      = newKind()
	homeMigrationStaged       = newKind()
)

func (HomeAttachedParentMissingEvidence) Kind() Kind { return homeAttachedParentMissing }
func (HomeAttachedCycleEvidence) Kind() Kind         { return homeAttachedCycle }
func (HomeRowFileMissingEvidence) Kind() Kind        { return homeRowFileMissing }
func (HomeRowOutsideHomeEvidence) Kind() Kind        { return homeRowOutsideHome }
func (HomeRowOtherThreadEvidence) Kind() Kind        { return homeRowOtherThread }
func (HomeRolloutWithoutRowEvidence) Kind() Kind     { return homeRolloutWithoutRow }
func (HomeHistoryModeMismatchEvidence) Kind() Kind   { return homeHistoryModeMismatch }
func (HomeArchivedMismatchEvidence) Kind() Kind      { return homeArchivedMismatch }
func (HomeProjectionPastEOFEvidence) Kind() Kind     { return homeProjectionPastEOF }
func (HomeProjectionOffBoundaryEvidence) Kind() Kind { return homeProjectionOffBoundary }
func (HomeProjectionOrdinalEvidence) Kind() Kind     { return homeProjectionOrdinal }
func (HomeProjectedItemMismatchEvidence) Kind() Kind { return homeProjectedItemMismatch }
func (HomeWriterLockHeldEvidence) Kind() Kind        { return homeWriterLockHeld }
func (HomeWriterLockStaleEvidence) Kind() Kind       { return homeWriterLockStale }
func (HomeMigrationPendingEvidence) Kind() Kind      { return homeMigrationPending }
func (HomeMigrationStagedEvidence) Kind() Kind       { return homeMigrationStaged }
