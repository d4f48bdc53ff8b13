package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/rollout-dev/rollout/internal/output/report"
)

// parquetRows reads every row of a table's files under dir (any
// partition) as text, sorted, and lists the files (none when the table
// was not written).
func parquetRows(t *testing.T, dir, table string) (rows, files []string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, table)); os.IsNotExist(err) {
		return nil, nil
	}
	err := filepath.WalkDir(filepath.Join(dir, table), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		r, err := os.Open(p)
		if err != nil {
			return err
		}
		defer r.Close()
		fi, err := r.Stat()
		if err != nil {
			return err
		}
		f, err := parquet.OpenFile(r, fi.Size())
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		names := make([]string, 0, len(f.Schema().Fields()))
		for _, c := range f.Schema().Fields() {
			names = append(names, c.Name())
		}
		pr := parquet.NewReader(f)
		defer pr.Close()
		buf := make([]parquet.Row, 64)
		for {
			n, err := pr.ReadRows(buf)
			for _, row := range buf[:n] {
				cells := make([]string, len(row))
				for i, v := range row {
					cells[i] = names[v.Column()] + "=" + v.String()
					if v.IsNull() {
						cells[i] = names[v.Column()] + "=null"
					}
				}
				rows = append(rows, strings.Join(cells, " "))
			}
			if err != nil {
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	return rows, files
}

// The shards of one run write disjoint files into one DIR, and the rows
// of all their files are the rows of the whole run's.
func TestVerifyParquetShards(t *testing.T) {
	t.Parallel()
	var inputs []string
	for _, pattern := range []string{"clean/*.jsonl", "demo/*.jsonl", "handoffs/*.jsonl", "budget/*.jsonl"} {
		m, err := filepath.Glob("../../fixtures/" + pattern)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, m...)
	}
	whole, shards := t.TempDir(), t.TempDir()
	format := report.FormatsOf(report.DocVerify)
	dirFormat := format[len(format)-1]
	if f, _ := report.LookupFormat(report.DocVerify, dirFormat); !f.Dir {
		t.Fatalf("verify's last format %s writes no directory", dirFormat)
	}
	verify := func(dir string, args ...string) {
		runCLI(t, append(append([]string{"verify", "--fail-on", "never", "--format", dirFormat + "=" + dir}, args...), inputs...)...)
	}
	verify(whole)
	var shardFiles [][]string
	for k := 1; k <= 2; k++ {
		before := map[string]bool{}
		for _, table := range []string{report.TableFindings, report.TableFiles} {
			_, files := parquetRows(t, shards, table)
			for _, f := range files {
				before[f] = true
			}
		}
		verify(shards, "--shard", fmt.Sprintf("%d/2", k))
		var mine []string
		for _, table := range []string{report.TableFindings, report.TableFiles} {
			_, files := parquetRows(t, shards, table)
			for _, f := range files {
				if !before[f] {
					mine = append(mine, f)
				}
			}
		}
		for _, f := range mine {
			if !strings.HasSuffix(f, fmt.Sprintf("/part-%d-of-2.parquet", k)) {
				t.Errorf("shard %d/2 wrote %s", k, f)
			}
		}
		shardFiles = append(shardFiles, mine)
	}
	if len(shardFiles[0]) == 0 || len(shardFiles[1]) == 0 {
		t.Fatalf("a shard wrote nothing: %v", shardFiles)
	}
	for _, table := range []string{report.TableFindings, report.TableFiles} {
		want, _ := parquetRows(t, whole, table)
		got, _ := parquetRows(t, shards, table)
		if len(want) < 5 {
			t.Errorf("%s: only %d rows in the whole run", table, len(want))
		}
		// The empty file a shard without findings writes has no rows.
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: rows of the shards (+) and of the whole run (-):\n%s", table, diff)
		}
	}
}

// simulate-budget's table is the --per-session rows, which the format
// turns on: without the flag it writes what it writes with it, a row per
// rollout and setting.
func TestFleetParquetIsPerSession(t *testing.T) {
	t.Parallel()
	formats := report.FormatsOf(report.DocFleet)
	dirFormat := formats[len(formats)-1]
	if f, _ := report.LookupFormat(report.DocFleet, dirFormat); !f.Dir {
		t.Fatalf("the fleet's last format %s writes no directory", dirFormat)
	}
	fleet := budgetFixtures + "fleet"
	implicit, explicit := t.TempDir(), t.TempDir()
	runCLI(t, "simulate-budget", "--window", "128k,258400", "--format", dirFormat+"="+implicit, fleet)
	runCLI(t, "simulate-budget", "--window", "128k,258400", "--per-session", "--format", dirFormat+"="+explicit, fleet)
	if got, want := treeBytes(t, implicit), treeBytes(t, explicit); !bytes.Equal(got, want) {
		t.Error("the table differs with and without --per-session")
	}
	rows, files := parquetRows(t, implicit, report.TableBudget)
	if len(files) != 1 || files[0] != report.TableBudget+"/part-1-of-1.parquet" {
		t.Errorf("files %v", files)
	}
	// 8 rollouts at 2 windows.
	if len(rows) != 16 {
		t.Errorf("%d rows, want 16:\n%s", len(rows), strings.Join(rows, "\n"))
	}
}
