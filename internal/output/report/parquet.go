package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// The parquet format writes tables into a directory (--format parquet=DIR)
// that DuckDB, Spark and BigQuery read as it is: verify's findings and
// files, Hive-partitioned by cli_version, and the fleet's rows per thread
// and setting. Each run (or shard, --shard K/N) writes part-K-of-N.parquet
// in each partition it has rows for, so the shards of one run write
// disjoint files into one DIR. The row types below are the published
// columns (docs/schema/*.parquet.v1.md): add columns, never rename one,
// as with the JSON schemas.

// parquetFinding is a row of DIR/findings: one finding.
type parquetFinding struct {
	Rule        string `parquet:"rule,dict,zstd"`
	Severity    string `parquet:"severity,dict,zstd"`
	URI         string `parquet:"uri,dict,zstd"`
	Line        int64  `parquet:"line,zstd"`
	ByteOffset  int64  `parquet:"byte_offset,zstd"`
	ThreadID    string `parquet:"thread_id,dict,zstd"`
	RolloutID   string `parquet:"rollout_id,dict,zstd"`
	LineageRoot string `parquet:"lineage_root,dict,zstd"`
	CLIVersion  string `parquet:"cli_version,dict,zstd"`
	Message     string `parquet:"message,zstd"`
	Evidence    string `parquet:"evidence,zstd"` // JSON text, {} when empty
}

// parquetFile is a row of DIR/files: one file verified.
type parquetFile struct {
	URI         string  `parquet:"uri,zstd"`
	ThreadID    string  `parquet:"thread_id,zstd"`
	RolloutID   string  `parquet:"rollout_id,zstd"`
	LineageRoot string  `parquet:"lineage_root,dict,zstd"`
	CLIVersion  string  `parquet:"cli_version,dict,zstd"`
	Era         string  `parquet:"era,dict,zstd"`
	HistoryMode string  `parquet:"history_mode,dict,zstd"`
	Bytes       int64   `parquet:"bytes,zstd"`
	Records     int64   `parquet:"records,zstd"`
	Turns       int64   `parquet:"turns,zstd"`
	Tokens      int64   `parquet:"tokens,zstd"`
	Compactions int64   `parquet:"compactions,zstd"`
	Errors      int64   `parquet:"errors,zstd"`
	Warnings    int64   `parquet:"warnings,zstd"`
	Infos       int64   `parquet:"infos,zstd"`
	ErrorCode   *string `parquet:"error_code,optional,dict,zstd"` // null when the file was read to its end
}

// parquetBudgetRow is a row of DIR/budget: one thread (rollout) under one
// setting, the fleet's --per-session numbers.
type parquetBudgetRow struct {
	URI                 string `parquet:"uri,dict,zstd"`
	ThreadID            string `parquet:"thread_id,dict,zstd"`
	ParentThreadID      string `parquet:"parent_thread_id,dict,zstd"`
	StartedAt           string `parquet:"started_at,zstd"`
	Requests            int64  `parquet:"requests,zstd"`
	RecordedWindow      int64  `parquet:"recorded_window,zstd"`
	RecordedCompactions int64  `parquet:"recorded_compactions,zstd"`
	Reproduced          int64  `parquet:"reproduced,zstd"`
	Window              int64  `parquet:"window,zstd"`
	Threshold           int64  `parquet:"threshold,zstd"`
	PostCompactTokens   int64  `parquet:"post_compact_tokens,zstd"`
	Compactions         int64  `parquet:"compactions,zstd"`
	PeakFill            int64  `parquet:"peak_fill,zstd"`
	Overflows           int64  `parquet:"overflows,zstd"`
	Deferrals           int64  `parquet:"deferrals,zstd"`
	Undelivered         int64  `parquet:"undelivered,zstd"`
	LedgerExhaustedAt   *int64 `parquet:"ledger_exhausted_at,optional,zstd"`
	Reminders           int64  `parquet:"reminders,zstd"`
	// The shared ledger that stopped the thread, when one did: the thread
	// whose request exhausted it and how many of this thread's requests
	// came before.
	SharedLedgerThreadID     *string `parquet:"shared_ledger_thread_id,optional,zstd"`
	SharedLedgerStoppedAfter *int64  `parquet:"shared_ledger_stopped_after,optional,zstd"`
}

// The tables, each a directory of DIR.
const (
	TableFindings = "findings"
	TableFiles    = "files"
	TableBudget   = "budget"
)

// UnknownCLIVersion is the partition of a file that records no
// cli_version: DuckDB reads the value back as the string "unknown".
const UnknownCLIVersion = "unknown"

// partitionKey is the Hive partition column of verify's tables.
const partitionKey = "cli_version"

// partitionOf is the directory of cli_version v under a table:
// "cli_version=V", the value percent-encoded outside [A-Za-z0-9._+-] (no
// Codex version has such characters; a path separator must not split it).
func partitionOf(v string) string {
	if v == "" {
		v = UnknownCLIVersion
	}
	var b strings.Builder
	for _, c := range []byte(v) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '+', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return partitionKey + "=" + b.String()
}

// partitionValue is the cli_version column of a row: the partition's
// value as DuckDB reads it from the path, so that the column in the file
// and the one hive_partitioning adds never disagree.
func partitionValue(v string) string {
	if v == "" {
		return UnknownCLIVersion
	}
	return v
}

// PartName is the file each partition of a table gets from the run (or
// shard) part: part-K-of-N.parquet, part-1-of-1.parquet for a whole run.
func PartName(part *shard.Spec) string {
	k, n := 1, 1
	if part != nil {
		k, n = part.K, part.N
	}
	return fmt.Sprintf("part-%d-of-%d.parquet", k, n)
}

// parquetTable writes one table of rows of T, one part file per
// partition, each through an outfile (a temporary file renamed on
// commit, refusing a symlink or anything but a regular file at its
// path). A partition's file is started by its first row.
type parquetTable[T any] struct {
	dir, part   string
	partitioned bool
	name        schema.Name
	parts       map[string]*parquetPart[T]
	order       []string
}

type parquetPart[T any] struct {
	file *outfile.File
	bw   *bufio.Writer
	w    *parquet.GenericWriter[T]
}

func newParquetTable[T any](dir, table string, part *shard.Spec, partitioned bool, name schema.Name) *parquetTable[T] {
	return &parquetTable[T]{dir: filepath.Join(dir, table), part: PartName(part), partitioned: partitioned,
		name: name, parts: map[string]*parquetPart[T]{}}
}

// write appends rows to the partition's file ("" for a table without
// partitions).
func (t *parquetTable[T]) write(partition string, rows ...T) error {
	p, err := t.open(partition)
	if err != nil {
		return err
	}
	_, err = p.w.Write(rows)
	return err
}

func (t *parquetTable[T]) open(partition string) (*parquetPart[T], error) {
	if p := t.parts[partition]; p != nil {
		return p, nil
	}
	dir := filepath.Join(t.dir, partition)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	f, err := outfile.Create(filepath.Join(dir, t.part), outfile.Options{RegularOnly: true})
	if err != nil {
		return nil, err
	}
	p := &parquetPart[T]{file: f, bw: bufio.NewWriterSize(f, 64<<10)}
	// The schema's root is named for the table, not for the Go type.
	p.w = parquet.NewGenericWriter[T](p.bw, parquet.NewSchema(string(t.name), parquet.SchemaOf(new(T))),
		// Statistics in every page header repeat, for the small files a
		// run writes, those of the column chunk (kept, for pruning); the
		// bounds of free text prune nothing. Together a quarter of the
		// bytes of a run over the rule fixtures.
		parquet.DataPageStatistics(false), parquet.SkipPageBounds("message"), parquet.SkipPageBounds("evidence"))
	p.w.SetKeyValueMetadata("rollout.schema", string(t.name))
	p.w.SetKeyValueMetadata("rollout.schema_version", fmt.Sprint(schema.Version(t.name)))
	t.parts[partition] = p
	t.order = append(t.order, partition)
	return p, nil
}

// commit completes every part file and renames it into place. A table
// without a row still gets one empty file (in the unknown partition when
// partitioned), so that a query of its files finds the columns and no
// rows. Then the files of this part that an earlier run left in other
// partitions go: they would be read as this run's.
func (t *parquetTable[T]) commit() error {
	if len(t.parts) == 0 {
		partition := ""
		if t.partitioned {
			partition = partitionOf("")
		}
		if _, err := t.open(partition); err != nil {
			return err
		}
	}
	var first error
	for _, name := range t.order {
		p := t.parts[name]
		err := p.w.Close()
		if err == nil {
			err = p.bw.Flush()
		}
		if err == nil {
			err = p.file.Commit()
		} else {
			p.file.Abort()
		}
		if err != nil && first == nil {
			first = fmt.Errorf("%s: %w", p.file.Name(), err)
		}
	}
	t.parts = nil
	if first != nil || !t.partitioned {
		return first
	}
	return t.removeStale()
}

// removeStale removes part files of this run's name in partitions it
// wrote nothing to: a regular file only, never through a symlink.
func (t *parquetTable[T]) removeStale() error {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return err
	}
	written := map[string]bool{}
	for _, name := range t.order {
		written[name] = true
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), partitionKey+"=") || written[e.Name()] {
			continue
		}
		stale := filepath.Join(t.dir, e.Name(), t.part)
		if fi, err := os.Lstat(stale); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// abort drops the part files being written; what was at their paths
// stays.
func (t *parquetTable[T]) abort() {
	for _, p := range t.parts {
		p.file.Abort()
	}
	t.parts = nil
}

// parquetStream writes verify's tables as files arrive (a formatStream:
// memory follows the row groups being filled, not the run).
type parquetStream struct {
	noSpool
	findings *parquetTable[parquetFinding]
	files    *parquetTable[parquetFile]
	evidence bytes.Buffer
	enc      *json.Encoder
	aborted  bool
}

func newParquetStream(dir string, part *shard.Spec) *parquetStream {
	s := &parquetStream{
		findings: newParquetTable[parquetFinding](dir, TableFindings, part, true, schema.VerifyFindings),
		files:    newParquetTable[parquetFile](dir, TableFiles, part, true, schema.VerifyFiles),
	}
	s.enc = json.NewEncoder(&s.evidence)
	s.enc.SetEscapeHTML(false)
	return s
}

func (s *parquetStream) file(f *result.FileResult, _ *result.Tally) error {
	partition, version := partitionOf(f.CLIVersion), partitionValue(f.CLIVersion)
	row := parquetFile{URI: f.Path, ThreadID: f.ThreadID, RolloutID: f.RolloutID, LineageRoot: f.LineageRoot,
		CLIVersion: version, Era: f.Era, HistoryMode: f.HistoryMode, Bytes: f.Bytes, Records: int64(f.Records),
		Turns: int64(f.Turns), Tokens: f.Tokens, Compactions: int64(f.Compactions)}
	if f.Error != nil {
		row.ErrorCode = &f.Error.Code
	}
	findings := make([]parquetFinding, 0, len(f.Findings))
	for i := range f.Findings {
		fd := &f.Findings[i]
		switch fd.Severity {
		case checks.Error:
			row.Errors++
		case checks.Warning:
			row.Warnings++
		default:
			row.Infos++
		}
		ev, err := s.evidenceJSON(fd)
		if err != nil {
			return fmt.Errorf("encode parquet report: %s line %d: %w", f.Path, fd.Line, err)
		}
		findings = append(findings, parquetFinding{Rule: fd.Rule, Severity: severityName(fd.Severity), URI: f.Path,
			Line: int64(fd.Line), ByteOffset: fd.ByteOffset, ThreadID: f.ThreadID, RolloutID: f.RolloutID,
			LineageRoot: f.LineageRoot, CLIVersion: version, Message: fd.Message, Evidence: ev})
	}
	if len(findings) > 0 {
		if err := s.findings.write(partition, findings...); err != nil {
			return wrapWrite("parquet", err)
		}
	}
	return wrapWrite("parquet", s.files.write(partition, row))
}

// evidenceJSON is the evidence as the JSON report writes it, compact.
func (s *parquetStream) evidenceJSON(fd *checks.Finding) (string, error) {
	ev := fd.EvidenceMap()
	if ev == nil {
		ev = map[string]any{}
	}
	s.evidence.Reset()
	if err := s.enc.Encode(ev); err != nil {
		return "", err
	}
	return strings.TrimSuffix(s.evidence.String(), "\n"), nil
}

func (s *parquetStream) finish(*result.Report, *result.Tally) error {
	if err := s.findings.commit(); err != nil {
		s.files.abort()
		return wrapWrite("parquet", err)
	}
	return wrapWrite("parquet", s.files.commit())
}

// release drops what was not committed (the stream failed or was
// discarded); after finish there is nothing left.
func (s *parquetStream) release() {
	if s.findings.parts != nil {
		s.findings.abort()
	}
	if s.files.parts != nil {
		s.files.abort()
	}
}

// openParquetOutput starts verify's parquet tables in dir for run's part.
func openParquetOutput(dir string, run *result.Report) *Stream {
	return &Stream{run: run, fs: newParquetStream(dir, run.Shard)}
}

// writeVerifyParquet writes a whole verify report's tables into dir.
func writeVerifyParquet(dir string, d VerifyDoc) error {
	s := openParquetOutput(dir, d.Report)
	for i := range d.Report.Files {
		if err := s.File(&d.Report.Files[i]); err != nil {
			s.Discard()
			return err
		}
	}
	return s.Close()
}

// ErrNoPerSession: a fleet without its per-session rows has no rows for
// the budget table.
var ErrNoPerSession = errors.New("the fleet has no per-session rows (simulate-budget --per-session writes them)")

// writeFleetParquet writes the fleet's budget table into dir: a row per
// rollout and setting, from the per-session rows.
func writeFleetParquet(dir string, f *budget.Fleet) error {
	if f.PerSession == nil {
		return ErrNoPerSession
	}
	t := newParquetTable[parquetBudgetRow](dir, TableBudget, f.Shard, false, schema.BudgetRows)
	var rows []parquetBudgetRow
	for _, r := range f.PerSession {
		for _, o := range r.Settings {
			row := parquetBudgetRow{URI: r.Path, ThreadID: r.ThreadID, ParentThreadID: r.ParentThreadID, StartedAt: r.StartedAt,
				Requests: int64(r.Requests), RecordedWindow: r.RecordedWindow, RecordedCompactions: int64(r.RecordedCompactions),
				Reproduced: int64(r.Reproduced), Window: o.Window, Threshold: o.Threshold, PostCompactTokens: o.PostCompactTokens,
				Compactions: int64(o.Compactions), PeakFill: o.PeakFill, Overflows: int64(o.Overflows), Deferrals: int64(o.Deferrals),
				Undelivered: int64(o.Undelivered), Reminders: int64(o.Reminders)}
			if o.LedgerExhaustedAt != nil {
				at := int64(*o.LedgerExhaustedAt)
				row.LedgerExhaustedAt = &at
			}
			if sl := o.SharedLedger; sl != nil {
				after := int64(sl.StoppedAfter)
				row.SharedLedgerThreadID, row.SharedLedgerStoppedAfter = &sl.ThreadID, &after
			}
			rows = append(rows, row)
		}
	}
	if len(rows) > 0 {
		if err := t.write("", rows...); err != nil {
			t.abort()
			return err
		}
	}
	return t.commit()
}
