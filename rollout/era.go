package rollout

import "github.com/tidwall/gjson"

// Era is the generation of the format a file was written in (format.md §1).
type Era string

const (
	EraUnknown  Era = "unknown"
	EraBare     Era = "bare"     // mid 2025: no envelope, no timestamps, no ids
	EraEnvelope Era = "envelope" // {timestamp, type, payload} lines
)

// History modes of envelope-era files.
const (
	HistoryLegacy    = "legacy"
	HistoryPaginated = "paginated"
)

// DetectEra looks at the first readable record of a file.
func DetectEra(rec *Record) Era {
	if rec == nil || !rec.Valid() {
		return EraUnknown
	}
	if rec.HasType() && rec.Payload().Exists() {
		return EraEnvelope
	}
	if !rec.HasType() && rec.Get("id").Exists() && !rec.Get("record_type").Exists() {
		return EraBare
	}
	if rec.HasType() {
		// A bare response item or an envelope line missing its payload:
		// the timestamp tells the envelope apart.
		if rec.Get("timestamp").Exists() {
			return EraEnvelope
		}
		return EraBare
	}
	return EraUnknown
}

// HistoryMode reads history_mode from a session_meta payload: "legacy" when
// absent, the raw value otherwise (callers fail closed on unknown values).
func HistoryMode(meta gjson.Result) string {
	m := meta.Get("history_mode")
	if !m.Exists() || m.Type == gjson.Null {
		return HistoryLegacy
	}
	if m.Type != gjson.String {
		return m.Raw
	}
	return m.Str
}
