package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// The rows as a reader of the published columns sees them: these types are
// the test's own, so a renamed column fails to read back.
type readFinding struct {
	Rule        string `parquet:"rule"`
	Severity    string `parquet:"severity"`
	URI         string `parquet:"uri"`
	Line        int64  `parquet:"line"`
	ByteOffset  int64  `parquet:"byte_offset"`
	ThreadID    string `parquet:"thread_id"`
	RolloutID   string `parquet:"rollout_id"`
	LineageRoot string `parquet:"lineage_root"`
	CLIVersion  string `parquet:"cli_version"`
	Message     string `parquet:"message"`
	Evidence    string `parquet:"evidence"`
}

type readFile struct {
	URI         string  `parquet:"uri"`
	ThreadID    string  `parquet:"thread_id"`
	RolloutID   string  `parquet:"rollout_id"`
	LineageRoot string  `parquet:"lineage_root"`
	CLIVersion  string  `parquet:"cli_version"`
	Era         string  `parquet:"era"`
	HistoryMode string  `parquet:"history_mode"`
	Bytes       int64   `parquet:"bytes"`
	Records     int64   `parquet:"records"`
	Turns       int64   `parquet:"turns"`
	Tokens      int64   `parquet:"tokens"`
	Compactions int64   `parquet:"compactions"`
	Errors      int64   `parquet:"errors"`
	Warnings    int64   `parquet:"warnings"`
	Infos       int64   `parquet:"infos"`
	ErrorCode   *string `parquet:"error_code,optional"`
}

type readBudgetRow struct {
	URI                      string  `parquet:"uri"`
	ThreadID                 string  `parquet:"thread_id"`
	ParentThreadID           string  `parquet:"parent_thread_id"`
	StartedAt                string  `parquet:"started_at"`
	Requests                 int64   `parquet:"requests"`
	RecordedWindow           int64   `parquet:"recorded_window"`
	RecordedCompactions      int64   `parquet:"recorded_compactions"`
	Reproduced               int64   `parquet:"reproduced"`
	Window                   int64   `parquet:"window"`
	Threshold                int64   `parquet:"threshold"`
	PostCompactTokens        int64   `parquet:"post_compact_tokens"`
	Compactions              int64   `parquet:"compactions"`
	PeakFill                 int64   `parquet:"peak_fill"`
	Overflows                int64   `parquet:"overflows"`
	Deferrals                int64   `parquet:"deferrals"`
	Undelivered              int64   `parquet:"undelivered"`
	LedgerExhaustedAt        *int64  `parquet:"ledger_exhausted_at,optional"`
	Reminders                int64   `parquet:"reminders"`
	SharedLedgerThreadID     *string `parquet:"shared_ledger_thread_id,optional"`
	SharedLedgerStoppedAfter *int64  `parquet:"shared_ledger_stopped_after,optional"`
}

// files lists the regular files under dir, slash-separated and relative.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readRows[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return rows
}

func ptr[T any](v T) *T { return &v }

func TestParquetVerifyTables(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "pq") // made as needed
	rep := sample()
	rep.Files = append(rep.Files, result.FileResult{Path: "sessions/gone.jsonl",
		Error: &result.FileError{Code: result.ErrNotFound, Message: "no such file"}})
	if err := WriteDir(DocVerify, "parquet", dir, VerifyDoc{Report: rep}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"files/cli_version=0.107.0/part-1-of-1.parquet",
		"files/cli_version=unknown/part-1-of-1.parquet",
		"findings/cli_version=0.107.0/part-1-of-1.parquet",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Fatalf("files written (-want +got):\n%s", diff)
	}
	const a, root = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0199a1b2-0000-7000-8000-00000000000a"
	finding := func(rule, sev string, line, off int64, msg, ev string) readFinding {
		return readFinding{Rule: rule, Severity: sev, URI: "sessions/2025/rollout-a.jsonl", Line: line, ByteOffset: off,
			ThreadID: a, RolloutID: a, LineageRoot: root, CLIVersion: "0.107.0", Message: msg, Evidence: ev}
	}
	wantFindings := []readFinding{
		finding("meta/old-cli", "info", 1, 0, "cli_version 0.50.0 predates turn ids", `{}`),
		finding("ordinal/gap", "error", 3, 512, "ordinal jumps from 5 to 7", `{"got":7,"note":"a<b","want":6}`),
		finding("item/missing-id", "warning", 9, 4211, trickyMessage, `{}`),
	}
	if diff := cmp.Diff(wantFindings, readRows[readFinding](t, filepath.Join(dir, want[2]))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	wantFiles := map[string][]readFile{
		want[0]: {{URI: "sessions/2025/rollout-a.jsonl", ThreadID: a, RolloutID: a, LineageRoot: root, CLIVersion: "0.107.0",
			Era: "envelope", HistoryMode: "legacy", Bytes: 5120, Records: 12, Turns: 3, Tokens: 48213, Compactions: 1,
			Errors: 1, Warnings: 1, Infos: 1}},
		want[1]: {
			{URI: "sessions/rollout-b.jsonl", CLIVersion: "unknown", Era: "legacy", Records: 6},
			{URI: "sessions/gone.jsonl", CLIVersion: "unknown", ErrorCode: ptr("not-found")},
		},
	}
	for file, rows := range wantFiles {
		if diff := cmp.Diff(rows, readRows[readFile](t, filepath.Join(dir, file))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
}

// A shard writes its own part in each partition, and removes the part of
// its name an earlier run left in a partition it has no rows for; other
// parts stay.
func TestParquetShardParts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stale := filepath.Join(dir, "files", "cli_version=9.9.9", "part-2-of-3.parquet")
	other := filepath.Join(dir, "files", "cli_version=9.9.9", "part-1-of-3.parquet")
	for _, p := range []string{stale, other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("old"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	rep := sample()
	rep.Shard = &shard.Spec{K: 2, N: 3}
	if err := WriteDir(DocVerify, "parquet", dir, VerifyDoc{Report: rep}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"files/cli_version=0.107.0/part-2-of-3.parquet",
		"files/cli_version=9.9.9/part-1-of-3.parquet",
		"files/cli_version=unknown/part-2-of-3.parquet",
		"findings/cli_version=0.107.0/part-2-of-3.parquet",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

// A report without findings still has a findings file to query: empty,
// in the unknown partition.
func TestParquetEmptyTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rep := &result.Report{Tool: "rollout", Command: "verify", Files: []result.FileResult{{Path: "a.jsonl", CLIVersion: "0.1.0"}}}
	if err := WriteDir(DocVerify, "parquet", dir, VerifyDoc{Report: rep}); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "findings", "cli_version=unknown", "part-1-of-1.parquet")
	if rows := readRows[readFinding](t, empty); len(rows) != 0 {
		t.Errorf("%d findings, want none", len(rows))
	}
}

// A part file's path that is a symlink is refused, never written through
// nor replaced; nothing is left half-written.
func TestParquetRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o666); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "files", "cli_version=0.107.0", "part-1-of-1.parquet")
	if err := os.MkdirAll(filepath.Dir(link), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	err := WriteDir(DocVerify, "parquet", dir, VerifyDoc{Report: sample()})
	if ue := (*outfile.UnsafeError)(nil); !errors.As(err, &ue) {
		t.Fatalf("error %v, want an *outfile.UnsafeError", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced (%v)", err)
	}
	for _, f := range files(t, dir) {
		if strings.Contains(f, "tmp") || strings.HasPrefix(filepath.Base(f), ".") {
			t.Errorf("left behind: %s", f)
		}
	}
}

func sampleFleet() *budget.Fleet {
	at := 3
	return &budget.Fleet{PerSession: []budget.SessionRow{
		{Path: "s/a.jsonl", ThreadID: "t-a", StartedAt: "2026-05-04T09:00:00Z", Requests: 8, RecordedWindow: 258400,
			RecordedCompactions: 1, Reproduced: 1, Settings: []budget.SessionOutcome{
				{Window: 128000, Threshold: 115200, PostCompactTokens: 9000, Compactions: 2, PeakFill: 120000, Overflows: 1},
				{Window: 258400, Threshold: 232560, PostCompactTokens: 9000, Compactions: 1, PeakFill: 200000, LedgerExhaustedAt: &at},
			}},
		{Path: "s/b.jsonl", ThreadID: "t-b", ParentThreadID: "t-a", Requests: 2, Settings: []budget.SessionOutcome{
			{Window: 128000, Threshold: 115200, Reminders: 1, SharedLedger: &budget.SharedLedger{ThreadID: "t-a", StoppedAfter: 1}},
		}},
	}, Shard: &shard.Spec{K: 1, N: 2}}
}

func TestParquetFleet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := WriteDir(DocFleet, "parquet", dir, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"budget/part-1-of-2.parquet"}, files(t, dir)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	want := []readBudgetRow{
		{URI: "s/a.jsonl", ThreadID: "t-a", StartedAt: "2026-05-04T09:00:00Z", Requests: 8, RecordedWindow: 258400,
			RecordedCompactions: 1, Reproduced: 1, Window: 128000, Threshold: 115200, PostCompactTokens: 9000,
			Compactions: 2, PeakFill: 120000, Overflows: 1},
		{URI: "s/a.jsonl", ThreadID: "t-a", StartedAt: "2026-05-04T09:00:00Z", Requests: 8, RecordedWindow: 258400,
			RecordedCompactions: 1, Reproduced: 1, Window: 258400, Threshold: 232560, PostCompactTokens: 9000,
			Compactions: 1, PeakFill: 200000, LedgerExhaustedAt: ptr(int64(3))},
		{URI: "s/b.jsonl", ThreadID: "t-b", ParentThreadID: "t-a", Requests: 2, Window: 128000, Threshold: 115200,
			Reminders: 1, SharedLedgerThreadID: ptr("t-a"), SharedLedgerStoppedAfter: ptr(int64(1))},
	}
	if diff := cmp.Diff(want, readRows[readBudgetRow](t, filepath.Join(dir, "budget/part-1-of-2.parquet"))); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if err := WriteDir(DocFleet, "parquet", t.TempDir(), &budget.Fleet{}); !errors.Is(err, ErrNoPerSession) {
		t.Errorf("a fleet without per-session rows: %v, want ErrNoPerSession", err)
	}
}

// docColumn is a row of a published column table: | `name` | `type` | ...
var docColumn = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `([^`]+)` \\|")

// TestParquetSchemaPublished: the columns of every table as written (read
// back from the file: name, repetition, physical and logical type) are
// those of its published description, in order, and the file names its
// table and version.
func TestParquetSchemaPublished(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := WriteDir(DocVerify, "parquet", dir, VerifyDoc{Report: sample()}); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(DocFleet, "parquet", dir, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	written := map[schema.Name]string{
		schema.VerifyFindings: "findings/cli_version=0.107.0/part-1-of-1.parquet",
		schema.VerifyFiles:    "files/cli_version=0.107.0/part-1-of-1.parquet",
		schema.BudgetRows:     "budget/part-1-of-2.parquet",
	}
	for _, table := range schema.ParquetTables() {
		doc, err := os.ReadFile("../../../" + schema.ParquetFile(table.Name))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, m := range docColumn.FindAllStringSubmatch(string(doc), -1) {
			want = append(want, m[1]+" "+m[2])
		}
		if !strings.Contains(string(doc), fmt.Sprintf("version %d", table.Version)) {
			t.Errorf("%s does not say version %d", schema.ParquetFile(table.Name), table.Version)
		}
		f := openParquet(t, filepath.Join(dir, written[table.Name]))
		var got []string
		for _, c := range f.Schema().Fields() {
			rep := "required"
			if c.Optional() {
				rep = "optional"
			}
			got = append(got, fmt.Sprintf("%s %s %s (%s)", c.Name(), rep, strings.ToLower(c.Type().Kind().String()), c.Type().LogicalType()))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: columns written (+) and published (-):\n%s", table.Name, diff)
		}
		name, _ := f.Lookup("rollout.schema")
		version, _ := f.Lookup("rollout.schema_version")
		if name != string(table.Name) || version != fmt.Sprint(table.Version) {
			t.Errorf("%s: key-value metadata says %s version %s", table.Name, name, version)
		}
		if f.Schema().Name() != string(table.Name) {
			t.Errorf("%s: schema named %q", table.Name, f.Schema().Name())
		}
	}
}

func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	fi, err := r.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(r, fi.Size())
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return f
}
