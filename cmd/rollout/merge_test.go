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

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/escape"
)

// runCLI runs the command in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	io, out, errb := testIO("")
	code := run(args, io)
	if code == exitUsage || code == exitInternal {
		t.Fatalf("rollout %q: exit %d: %s", args, code, errb)
	}
	return code, out.Bytes()
}

// runFormat runs cmd with --format format over inputs and returns its
// exit code and what it wrote: standard output, or for a format that
// writes a directory, every file it wrote there (name and bytes).
func runFormat(t *testing.T, doc report.Document, format string, cmd, inputs []string) (int, []byte) {
	t.Helper()
	spec, dir := format, ""
	if f, _ := report.LookupFormat(doc, format); f.Dir {
		dir = t.TempDir()
		spec += "=" + dir
	}
	code, out := runCLI(t, append(append(slices.Clone(cmd), "--format", spec), inputs...)...)
	if dir != "" {
		out = treeBytes(t, dir)
	}
	return code, out
}

// treeBytes is every regular file under dir, its relative name then its
// bytes, in walk order.
func treeBytes(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "== %s (%d bytes)\n", filepath.ToSlash(rel), len(data))
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 {
		t.Fatalf("nothing written in %s", dir)
	}
	return b.Bytes()
}

// shardReports runs a command once per shard of n with --format json and
// returns the report files.
func shardReports(t *testing.T, dir string, n int, cmd []string, inputs []string) []string {
	t.Helper()
	var files []string
	for k := 1; k <= n; k++ {
		args := append(append(slices.Clone(cmd), "--format", "json", "--shard", fmt.Sprintf("%d/%d", k, n)), inputs...)
		_, out := runCLI(t, args...)
		p := filepath.Join(dir, fmt.Sprintf("%s-%d-of-%d.json", cmd[0], k, n))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

// For every format, merging the JSON reports of the N shards of a run
// writes exactly the bytes of the single run over the same inputs, with
// the same exit code: verify over the rule, clean and demo fixtures (many
// findings, several eras), simulate-budget over the fleet fixture.
func TestMergeIsTheSingleRun(t *testing.T) {
	// The rule fixtures (each txtar's rollout.jsonl: one or more findings
	// of every rule), the clean, demo and handoff rollouts.
	rules, err := filepath.Glob("../../fixtures/rules/*.txtar")
	if err != nil || len(rules) < 20 {
		t.Fatalf("rule fixtures: %d, %v", len(rules), err)
	}
	var rollouts []string
	src := t.TempDir()
	for _, p := range rules {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "rollout.jsonl" {
				out := filepath.Join(src, strings.TrimSuffix(filepath.Base(p), ".txtar")+".jsonl")
				if err := os.WriteFile(out, escape.Decode(f.Data), 0o644); err != nil {
					t.Fatal(err)
				}
				rollouts = append(rollouts, out)
			}
		}
	}
	for _, pattern := range []string{"clean/*.jsonl", "demo/*.jsonl", "handoffs/*.jsonl"} {
		m, err := filepath.Glob("../../fixtures/" + pattern)
		if err != nil {
			t.Fatal(err)
		}
		rollouts = append(rollouts, m...)
	}
	if _, out := runCLI(t, append([]string{"verify", "--fail-on", "never", "--format", "jsonl"}, rollouts...)...); bytes.Count(out, []byte("\n")) < 50 {
		t.Fatalf("only %d findings in %d rollouts: too few to test merging", bytes.Count(out, []byte("\n")), len(rollouts))
	}
	budgetCmd := []string{"simulate-budget", "--window", "128k,258400", "--ledger", "100000", "--per-session"}
	fleet := []string{budgetFixtures + "fleet"}
	for _, n := range []int{1, 3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			// Filters apply in the shards, presentation in the merge. Every
			// run judges liveness at one --now: the shards and the single run
			// happen at different seconds, and idle_seconds would differ.
			now := []string{"--now", "2026-11-30T00:00:00Z"}
			for _, flags := range []struct{ shard, merge []string }{
				{append([]string{"--fail-on", "warning"}, now...), []string{"--fail-on", "warning"}},
				{append([]string{"--fail-on", "error", "--show-severity", "warning", "--statistics"}, now...), []string{"--fail-on", "error", "--statistics"}},
			} {
				verifyReports := shardReports(t, dir, n, append([]string{"verify"}, flags.shard...), rollouts)
				for _, format := range report.FormatsOf(report.DocVerify) {
					wantCode, want := runFormat(t, report.DocVerify, format, append([]string{"verify"}, flags.shard...), rollouts)
					gotCode, got := runFormat(t, report.DocVerify, format, append([]string{"merge"}, flags.merge...), verifyReports)
					if !bytes.Equal(want, got) || wantCode != gotCode {
						t.Errorf("verify %q --format %s: merge of %d shards differs from the single run (exit %d, want %d):\n%s\nwant:\n%s",
							flags.shard, format, n, gotCode, wantCode, got, want)
					}
				}
			}
			budgetReports := shardReports(t, dir, n, budgetCmd, fleet)
			for _, format := range report.FormatsOf(report.DocFleet) {
				_, want := runFormat(t, report.DocFleet, format, budgetCmd, fleet)
				_, got := runFormat(t, report.DocFleet, format, []string{"merge"}, budgetReports)
				if !bytes.Equal(want, got) {
					t.Errorf("simulate-budget --format %s: merge of %d shards differs from the single run:\n%s\nwant:\n%s", format, n, got, want)
				}
			}
		})
	}
}
