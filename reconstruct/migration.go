package reconstruct

import "github.com/rollout-dev/rollout/rollout"

// DefaultMigrationLimit is the largest JSONL record (16 MiB) the reader of
// Codex's legacy-to-paginated rollout migration keeps: larger records are
// drained to their newline and dropped before their type is read, and the
// migration still reports success (codex-rs/thread-store/src/local/
// rollout_migration.rs, the record cap also wired into the sub-agent path;
// openai/codex#37673 on main in August 2026, 0.148.0-alpha.12 in #25215,
// 0.153.4 in #44141).
const DefaultMigrationLimit = 16 << 20

// noteSize remembers a record over the migration limit. Whether it matters
// is only known at the end: the migration reads legacy-mode files.
func (e *engine) noteSize(rec *rollout.Record, pos Pos, typ string) {
	limit := e.opts.MigrationLimit
	if limit <= 0 {
		limit = DefaultMigrationLimit
	}
	if rec.Size <= limit {
		return
	}
	e.overLimit = append(e.overLimit, Observation{Pos: pos, Evidence: RecordOverMigrationLimitEvidence{
		Bytes: rec.Size, Limit: limit, Type: typ, Checkpoint: typ == rollout.TypeCompacted}})
}
