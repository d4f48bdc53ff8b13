//go:build cgo

package duckcheck

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/escape"
)

const root = "../../.."

var build struct {
	once sync.Once
	bin  string
	err  error
}

// rolloutBin builds the shipped binary once (go build ./cmd/rollout).
func rolloutBin(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "duckcheck-*")
		if err != nil {
			build.err = err
			return
		}
		build.bin = filepath.Join(dir, "rollout")
		cmd := exec.Command("go", "build", "-o", build.bin, "./cmd/rollout")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/rollout: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// openDuckDB opens an in-memory DuckDB, or skips the test saying why.
func openDuckDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err == nil {
		err = db.Ping()
	}
	if err != nil {
		t.Skipf("DuckDB is not available here (%v): the Parquet tables were not checked with DuckDB", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fixtures are rollouts with many findings of many rules and Codex
// versions: the rule fixtures' rollouts, written out, and the plain ones.
func fixtures(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	txtars, err := filepath.Glob(filepath.Join(root, "fixtures/rules/*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range txtars {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "rollout.jsonl" {
				name := filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".txtar")+".jsonl")
				if err := os.WriteFile(name, escape.Decode(f.Data), 0o644); err != nil {
					t.Fatal(err)
				}
				out = append(out, name)
			}
		}
	}
	for _, pattern := range []string{"clean/*.jsonl", "demo/*.jsonl", "handoffs/*.jsonl", "budget/*.jsonl"} {
		m, err := filepath.Glob(filepath.Join(root, "fixtures", pattern))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 50 {
		t.Fatalf("only %d fixtures", len(out))
	}
	return out
}

func verify(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(rolloutBin(t), append([]string{"verify", "--fail-on", "never"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rollout verify: %v\n%s", err, out)
	}
}

// jsonReport is what the test reads of the JSON report.
type jsonReport struct {
	Summary struct {
		Files, Errors, Warnings, Infos int
	}
	Files []struct {
		CLIVersion string `json:"cli_version"`
		Findings   []struct{ Rule, Severity string }
	}
}

// counts runs a query of two columns, a key and a count.
func counts(t *testing.T, db *sql.DB, query string) map[string]int {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// docQuery is the query docs/scale.md shows under "Findings as Parquet",
// with its directory (out/) replaced by dir.
func docQuery(t *testing.T, dir string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs/scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Findings as Parquet")
	m := regexp.MustCompile("(?s)```sql\n(.*?)```").FindStringSubmatch(section)
	if !ok || m == nil {
		t.Fatal("docs/scale.md has no sql block under \"## Findings as Parquet\"")
	}
	if !strings.Contains(m[1], "'out/") {
		t.Fatalf("the query reads no out/ directory:\n%s", m[1])
	}
	return strings.ReplaceAll(m[1], "'out/", "'"+filepath.ToSlash(dir)+"/")
}

// TestDuckDBReadsVerifyTables: DuckDB reads the tables as they are
// (hive_partitioning on, the cli_version column in the files agreeing
// with the partition's) and counts what the JSON report of the same run
// counts: findings by severity and by rule, files, files by version.
func TestDuckDBReadsVerifyTables(t *testing.T) {
	db := openDuckDB(t)
	inputs := fixtures(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	verify(t, append([]string{"--format", "json=" + filepath.Join(dir, "r.json"), "--format", "parquet=" + out}, inputs...)...)
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep jsonReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	bySeverity, byRule, byVersion := map[string]int{}, map[string]int{}, map[string]int{}
	for _, f := range rep.Files {
		v := f.CLIVersion
		if v == "" {
			v = "unknown"
		}
		byVersion[v]++
		for _, fd := range f.Findings {
			bySeverity[fd.Severity]++
			byRule[fd.Rule]++
		}
	}
	if len(byRule) < 20 || len(byVersion) < 3 {
		t.Fatalf("too little to compare: %d rules, %d versions", len(byRule), len(byVersion))
	}
	if want := (map[string]int{"error": rep.Summary.Errors, "warning": rep.Summary.Warnings, "info": rep.Summary.Infos}); !cmp.Equal(want, bySeverity) {
		t.Fatalf("the report's summary %v and its findings %v disagree", want, bySeverity)
	}

	parquetBytes, parts := 0, 0
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			parquetBytes, parts = parquetBytes+int(fi.Size()), parts+1
		}
		return err
	})
	t.Logf("%d files (%d cli_versions), %d findings: JSON report %d bytes, Parquet tables %d bytes in %d files",
		rep.Summary.Files, len(byVersion), rep.Summary.Errors+rep.Summary.Warnings+rep.Summary.Infos, len(data), parquetBytes, parts)

	findings := fmt.Sprintf("read_parquet('%s/findings/*/*.parquet', hive_partitioning = true)", filepath.ToSlash(out))
	files := fmt.Sprintf("read_parquet('%s/files/*/*.parquet', hive_partitioning = true)", filepath.ToSlash(out))
	for _, c := range []struct {
		what  string
		query string
		want  map[string]int
	}{
		{"findings by severity, as docs/scale.md shows", docQuery(t, out), bySeverity},
		{"findings by rule", "SELECT rule, count(*) FROM " + findings + " GROUP BY ALL", byRule},
		{"files", "SELECT 'files', count(*) FROM " + files, map[string]int{"files": rep.Summary.Files}},
		{"files by version", "SELECT cli_version, count(*) FROM " + files + " GROUP BY ALL", byVersion},
		{"severity counts of the files table", "SELECT 'error', sum(errors) FROM " + files +
			" UNION ALL SELECT 'warning', sum(warnings) FROM " + files + " UNION ALL SELECT 'info', sum(infos) FROM " + files, bySeverity},
		// The partition DuckDB reads from the path is a string (never
		// autocast to a number or a date), and the column in each file
		// (read without hive_partitioning) is the partition's value.
		{"cli_version read as text", "SELECT typeof(cli_version), count(*) FROM " + files + " GROUP BY ALL",
			map[string]int{"VARCHAR": rep.Summary.Files}},
		{"rows whose column is not their partition", "SELECT 'mismatch', count(*) FROM read_parquet(['" +
			filepath.ToSlash(out) + "/findings/*/*.parquet', '" + filepath.ToSlash(out) + "/files/*/*.parquet'], " +
			"hive_partitioning = false, union_by_name = true, filename = true) " +
			"WHERE NOT contains(filename, '/cli_version=' || cli_version || '/')", map[string]int{"mismatch": 0}},
	} {
		if diff := cmp.Diff(c.want, counts(t, db, c.query)); diff != "" {
			t.Errorf("%s: DuckDB (+) and the JSON report (-) differ:\n%s\n%s", c.what, diff, c.query)
		}
	}
}

// TestDuckDBReadsShards: shards 1/2 and 2/2 of one run write into one DIR,
// and DuckDB reads the union as the whole run's rows.
func TestDuckDBReadsShards(t *testing.T) {
	db := openDuckDB(t)
	inputs := fixtures(t)
	dir := t.TempDir()
	whole, shards := filepath.Join(dir, "whole"), filepath.Join(dir, "shards")
	verify(t, append([]string{"--format", "parquet=" + whole}, inputs...)...)
	for k := 1; k <= 2; k++ {
		verify(t, append([]string{"--shard", fmt.Sprintf("%d/2", k), "--format", "parquet=" + shards}, inputs...)...)
	}
	for _, table := range []string{"findings", "files"} {
		q := func(d string) string {
			return fmt.Sprintf("SELECT * FROM read_parquet('%s/%s/*/*.parquet', hive_partitioning = true)", filepath.ToSlash(d), table)
		}
		diff := "SELECT 'rows', count(*) FROM ((" + q(whole) + " EXCEPT ALL " + q(shards) + ") UNION ALL (" + q(shards) + " EXCEPT ALL " + q(whole) + "))"
		if got := counts(t, db, diff); got["rows"] != 0 {
			t.Errorf("%s: %d rows differ between the shards and the whole run", table, got["rows"])
		}
		parts := counts(t, db, fmt.Sprintf("SELECT regexp_extract(filename, 'part-[0-9]+-of-[0-9]+'), count(*) FROM read_parquet('%s/%s/*/*.parquet', filename = true) GROUP BY ALL",
			filepath.ToSlash(shards), table))
		if table == "files" && (parts["part-1-of-2"] == 0 || parts["part-2-of-2"] == 0 || len(parts) != 2) {
			t.Errorf("%s: rows by part %v, want both shards' parts and nothing else", table, parts)
		}
	}
}

// TestShippedBinaryHasNoDuckDB: DuckDB is this test's dependency alone.
func TestShippedBinaryHasNoDuckDB(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", rolloutBin(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if bytes.Contains(bytes.ToLower(out), []byte("duckdb")) {
		t.Errorf("the rollout binary links DuckDB:\n%s", out)
	}
	if !bytes.Contains(out, []byte("github.com/parquet-go/parquet-go")) {
		t.Errorf("go version -m lists no parquet-go: is this the binary?\n%s", out)
	}
}
