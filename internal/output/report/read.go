package report

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// ReadJSON decodes a report written by the json format, its inverse, so
// that every other format can be rendered from it (`rollout merge`).
// Evidence numbers are kept as written (json.Number), so they encode again
// to the same bytes.
func ReadJSON(data []byte) (*result.Report, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var jr jsonReport
	if err := dec.Decode(&jr); err != nil {
		return nil, err
	}
	if jr.SchemaVersion < 1 || jr.SchemaVersion > schemaVersion {
		return nil, fmt.Errorf("schema_version %d (this rollout reads 1 to %d)", jr.SchemaVersion, schemaVersion)
	}
	r := &result.Report{Tool: jr.Tool, Version: jr.Version, Command: jr.Command, Notes: jr.Notes, Settings: jr.Settings, Shard: jr.Shard,
		Suppressed: jr.Summary.Suppressed, Hidden: jr.Summary.Hidden, Files: make([]result.FileResult, 0, len(jr.Files))}
	for _, jf := range jr.Files {
		f := result.FileResult{Path: jf.Path, Records: jf.Records, Era: jf.Era, HistoryMode: jf.HistoryMode,
			CLIVersion: jf.CLIVersion, ThreadID: jf.ThreadID, Findings: make([]checks.Finding, 0, len(jf.Findings)),
			FileFacts: result.FileFacts{RolloutID: jf.RolloutID, LineageRoot: jf.LineageRoot, Bytes: jf.Bytes,
				Turns: jf.Turns, Tokens: jf.Tokens, Compactions: jf.Compactions}}
		if jf.Error != nil {
			f.Error = &result.FileError{Code: jf.Error.Code, Message: jf.Error.Message}
		}
		for _, jd := range jf.Findings {
			sev, err := checks.ParseSeverity(jd.Severity)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", jf.Path, jd.Line, err)
			}
			ev := jd.Evidence
			if len(ev) == 0 {
				ev = nil
			}
			f.Findings = append(f.Findings, checks.Finding{Rule: jd.Rule, Severity: sev, Path: jf.Path,
				Line: jd.Line, ByteOffset: jd.ByteOffset, Ordinal: jd.Ordinal, Message: jd.Message,
				Fixable: jd.Fixable, Evidence: ev})
		}
		r.Files = append(r.Files, f)
	}
	return r, nil
}
