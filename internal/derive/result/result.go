// Package result is verify's result model: what each file yielded
// (FileResult, FileError) and the run as a whole (Report, Settings), in the
// canonical order every printer expects (Normalize). It sits after checks/,
// below both the steps that shape a result (internal/derive/policy, merge)
// and the printers (internal/output/report), so that producing a result
// never needs the printers. It prints nothing.
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// FileResult is what verify found in one file.
type FileResult struct {
	Path        string
	Records     int
	Era         string
	HistoryMode string
	CLIVersion  string
	ThreadID    string
	FileFacts
	Findings []checks.Finding
	// Error is set when the file could not be analysed, or not to its end:
	// every format shows it, so that an unreadable file never looks clean.
	Error *FileError

	// Size (bytes as stored) and Version (an object's ETag, a file's
	// modification time) are the file as it was before it was read;
	// Version is "" when unknown (standard input). An incremental run
	// (verify --since) reuses the result of a file whose both are unchanged.
	Size    int64
	Version string
	// DependsOn names what the result depended on besides the file's bytes
	// and the settings (DependsClock, DependsLineage): such a file is read
	// again by an incremental run.
	DependsOn []string
	// Hidden and Suppressed count the findings of the file the run left
	// out (below the displayed severity; accepted by the baseline), so that
	// a reused result adds them to the run's totals.
	Hidden, Suppressed int
	// Incomplete: a rule found that part of the file was not analysed,
	// whether its finding is listed or not (the exit code's rank).
	Incomplete bool
}

// FileFacts are what verify measures of a file besides its findings, for
// reports that count over many files (the Parquet files table). Zero when
// unknown: a file not analysed, or a report written before they were.
type FileFacts struct {
	// RolloutID is the id Codex finds the file by: its file name's, else
	// its session_meta id (lineage.Rollout.ID).
	RolloutID string
	// LineageRoot is the rollout id at the root of the lineage the replay
	// followed (the first of reconstruct.State.Segments): RolloutID for a
	// file that continues no other, or whose source was not read.
	LineageRoot string
	// Turns counts the turns the file's own records start, rolled back
	// ones included; Compactions its compacted records.
	Turns, Compactions int
	// Tokens is the thread's cumulative total_token_usage.total_tokens at
	// the last token_count that survives.
	Tokens int64
}

// FileError says why a file could not be analysed. Code is one of the
// stable Err* codes; Message is for people.
type FileError struct {
	Code    string
	Message string
}

// The codes of FileError, part of the JSON schema: never renamed.
const (
	ErrNotFound   = "not-found"         // vanished between the walk and the read
	ErrPermission = "permission-denied" // the file or directory cannot be opened
	ErrNotRegular = "not-regular-file"  // a FIFO, socket or device, not opened
	ErrNotRollout = "not-a-rollout"     // an archive or another format
	ErrReadFailed = "read-failed"       // failed part-way (I/O, corrupt zstd)
	ErrUnreadable = "unreadable"        // any other failure to open or list
	ErrInternal   = "internal-error"    // a bug, caught and reported
)

// NewFileError says why the file at path could not be analysed, with a
// stable code. The message leaves out the path, which every format shows
// beside it.
func NewFileError(path string, err error) *FileError {
	var ie *reconstruct.InternalError
	code := ErrUnreadable
	switch {
	case errors.As(err, &ie):
		code = ErrInternal
	case errors.As(err, new(*reconstruct.ReadError)):
		code = ErrReadFailed
	case errors.Is(err, rollout.ErrUnknownFormat):
		code = ErrNotRollout
	case errors.Is(err, rollout.ErrNotRegular):
		code = ErrNotRegular
	case errors.Is(err, fs.ErrNotExist):
		code = ErrNotFound
	case errors.Is(err, fs.ErrPermission):
		code = ErrPermission
	}
	return &FileError{Code: code, Message: strings.TrimPrefix(err.Error(), path+": ")}
}

// Report is the whole result of one run.
type Report struct {
	Tool    string // "rollout"
	Version string // the tool's version
	Command string // "verify"
	Files   []FileResult
	// Notes are remarks about the run as a whole (an input directory that
	// holds no rollout), shown by the human formats and the JSON report.
	Notes []string
	// Suppressed counts the findings left out because --baseline lists
	// them; Hidden those left out because they are below the displayed
	// severity (--quiet, --show-severity). Neither is in Files.
	Suppressed, Hidden int
	// Settings are what decided which findings the run reports; merge
	// refuses shards whose settings differ. Nil in a report of a rollout
	// that did not record them.
	Settings *Settings
	// Shard is the part of the run the report covers (--shard K/N); nil
	// for a whole run.
	Shard *shard.Spec
	// Checked, when set, is what the summary counts instead of files and
	// records, for a run that reads no records (home: "3 rollouts, 3
	// threads rows").
	Checked string
}

// Settings are the options of a verify run that change what it reports
// (filters, baseline, limits, the clock), as the JSON report records them.
// What presents the findings (formats, --fail-on, colour) is not here: it
// is merge's to choose.
type Settings struct {
	Select         []string            `json:"select"`
	Ignore         []string            `json:"ignore"`
	PerPathIgnores map[string][]string `json:"per_path_ignores"`
	// ShowSeverity is the lowest severity listed (--show-severity, or
	// --fail-on with --quiet).
	ShowSeverity string `json:"show_severity"`
	// Baseline is "sha256:HEX" of the --baseline read, "written" with
	// --write-baseline, "" without.
	Baseline           string `json:"baseline"`
	MaxLineBytes       int64  `json:"max_line_bytes"`
	MaxFindingsPerRule int    `json:"max_findings_per_rule"`
	HandoffCap         int64  `json:"handoff_cap"`
	// Now is --now (RFC 3339), "" when liveness was judged by the clock.
	Now   string `json:"now"`
	Force bool   `json:"force"`
}

// Differ names the first setting in which s and o differ, with both
// values ("select [item/] and []"); "" when they are the same.
func (s *Settings) Differ(o *Settings) string {
	a, b := reflect.ValueOf(*s), reflect.ValueOf(*o)
	for i := range a.NumField() {
		va, _ := json.Marshal(a.Field(i).Interface())
		vb, _ := json.Marshal(b.Field(i).Interface())
		if !bytes.Equal(va, vb) {
			name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
			return fmt.Sprintf("%s %s and %s", name, va, vb)
		}
	}
	return ""
}
