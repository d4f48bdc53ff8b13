package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/escape"
)

// sinceFleet writes the rule fixtures' rollouts, the clean ones and a
// fork with its parent (lineage-cutoff-past-end) under dir, every file
// modified at base, and the list of them; it returns the paths by name.
func sinceFleet(t *testing.T, dir string, base time.Time) (map[string]string, string) {
	t.Helper()
	files := map[string]string{}
	put := func(name string, data []byte) {
		p := filepath.Join(dir, "fleet", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeAt(t, p, data, base)
		files[name] = p
	}
	rules, err := filepath.Glob("../../fixtures/rules/*.txtar")
	if err != nil || len(rules) < 20 {
		t.Fatalf("rule fixtures: %d, %v", len(rules), err)
	}
	for _, p := range rules {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		for _, f := range ar.Files {
			switch {
			case f.Name == "rollout.jsonl":
				put(name+".jsonl", escape.Decode(f.Data))
			case name == "lineage-cutoff-past-end" && strings.HasPrefix(f.Name, "sessions/"):
				put("parent/"+filepath.Base(f.Name), escape.Decode(f.Data))
			}
		}
	}
	clean, _ := filepath.Glob("../../fixtures/clean/*.jsonl")
	for _, p := range clean {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		put("clean-"+filepath.Base(p), data)
	}
	var list []string
	for _, p := range files {
		list = append(list, p)
	}
	slices.Sort(list)
	listFile := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(listFile, []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return files, listFile
}

// writeAt writes data to path and sets its modification time to mtime.
func writeAt(t *testing.T, path string, data []byte, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func fileOf(t *testing.T, rep []byte, path string) *result.FileResult {
	t.Helper()
	r, err := report.ReadJSON(rep)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	t.Fatalf("%s is not in the report", path)
	return nil
}

var sinceSummary = regexp.MustCompile(`(?m)^rollout: --since: ([0-9,]+) files? unchanged \(results reused\), ([0-9,]+) read$`)

// reusedAndRead are the counts of the --since line on stderr.
func reusedAndRead(t *testing.T, stderr string) (int, int) {
	t.Helper()
	m := sinceSummary.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no --since summary on stderr:\n%s", stderr)
	}
	reused, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	read, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	return reused, read
}

// TestVerifySince: an incremental run (verify --since the previous JSON
// report) writes byte for byte the report of a full run over the files as
// they are now, reads only the files that changed, continue another
// rollout or depend on a clock that moved, and refuses a previous report
// made with other settings. Sharded, each shard given its own previous
// report, the merged report is the full run's.
func TestVerifySince(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	files, list := sinceFleet(t, dir, base)
	const now1, now2 = "--now=2026-08-12T00:02:00Z", "--now=2026-08-12T05:00:00Z"
	common := []string{"verify", "--fail-on", "never", "--format", "json"}
	verify := func(args ...string) []byte {
		t.Helper()
		_, out := runCLI(t, append(slices.Clone(common), args...)...)
		return out
	}
	since := func(args ...string) ([]byte, string) {
		t.Helper()
		code, out, stderr := runRollout(append(slices.Clone(common), args...)...)
		if code != exitOK {
			t.Fatalf("verify %q: exit %d: %s", args, code, stderr)
		}
		return []byte(out), stderr
	}
	save := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plan := func(name string) string {
		t.Helper()
		m := filepath.Join(dir, name)
		runCLI(t, "plan", "--files-from", list, "-o", m)
		return m
	}
	same := func(what string, got, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the incremental report is not the full run's (-full +incremental):\n%s", what, cmp.Diff(string(want), string(got)))
		}
	}

	m1 := plan("m1.jsonl")
	r1 := verify("--manifest", m1, now1)
	prev := save("r1.json", r1)
	// Each shard's report of the fleet as it is now, for the sharded
	// incremental run at the end.
	var shardPrev []string
	for k := 1; k <= 2; k++ {
		shardPrev = append(shardPrev, save(fmt.Sprintf("old-%d.json", k), verify("--manifest", m1, now1, fmt.Sprintf("--shard=%d/2", k))))
	}

	// Unchanged files: everything reused but the forks.
	out, stderr := since("--manifest", m1, now1, "--since", prev)
	same("nothing changed", out, r1)
	lineage := 0
	for _, f := range mustRead(t, r1).Files {
		if slices.Contains(f.DependsOn, result.DependsLineage) {
			lineage++
		}
	}
	if reused, read := reusedAndRead(t, stderr); read != lineage || reused != len(files)-lineage || lineage < 5 {
		t.Errorf("nothing changed: %d reused, %d read; want %d read (the forks), %d reused", reused, read, lineage, len(files)-lineage)
	}

	// One file grows by a record (the parent of a fork), another is
	// rewritten; plan again.
	later := base.Add(time.Hour)
	parent := files["parent/rollout-2026-09-09T04-00-00-01a08452-9556-7121-8021-00009e3779b3.jsonl"]
	grown := append(readFile(t, parent), `{"timestamp":"2026-09-09T05:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"appended later"}}`+"\n"...)
	writeAt(t, parent, grown, later)
	writeAt(t, files["ordinal-gap.jsonl"], readFile(t, files["ordinal-duplicate.jsonl"]), later)
	m2 := plan("m2.jsonl")
	full2 := verify("--manifest", m2, now1)
	out, stderr = since("--manifest", m2, now1, "--since", prev)
	same("two files changed", out, full2)
	if _, read := reusedAndRead(t, stderr); read != lineage+2 {
		t.Errorf("two files changed: %d read, want %d (the forks and the two)", read, lineage+2)
	}
	fork := files["lineage-cutoff-past-end.jsonl"]
	if cmp.Equal(fileOf(t, r1, fork).Findings, fileOf(t, full2, fork).Findings) {
		t.Errorf("the fork's findings do not follow its parent's growth: the test proves nothing about lineages")
	}
	prev2 := save("r2.json", out)

	// A file reused is not read: its content replaced by garbage of the
	// same size, modified at the same time, does not change the report,
	// while a full run sees the garbage.
	blank := files["line-blank.jsonl"]
	orig := readFile(t, blank)
	writeAt(t, blank, bytes.Repeat([]byte("x"), len(orig)), base)
	out, _ = since("--manifest", m2, now1, "--since", prev2)
	same("an unchanged file's content replaced behind its size and time", out, full2)
	if code, garbage, _ := runRollout(append(slices.Clone(common), "--manifest", m2, now1)...); code == exitOK && garbage == string(full2) {
		t.Errorf("a full run does not see the garbage: the test proves nothing")
	}
	writeAt(t, blank, orig, base)

	// Settings that change what is reported: refused, naming the setting.
	code, _, stderr := runRollout(append(slices.Clone(common), "--manifest", m2, now1, "--since", prev2, "--select", "line/")...)
	if code != exitUsage || !strings.Contains(stderr, "other settings (select [] and [\"line/\"])") {
		t.Errorf("--select line/ against a report without: exit %d, %s", code, stderr)
	}
	code, _, stderr = runRollout(append(slices.Clone(common), "--manifest", m2, now1, "--since", prev2, "--write-baseline", filepath.Join(dir, "b.json"))...)
	if code != exitUsage || !strings.Contains(stderr, "--write-baseline") {
		t.Errorf("--write-baseline with --since: exit %d, %s", code, stderr)
	}
	// A report of another version: every file is read, and said so.
	other := save("other.json", bytes.Replace(full2, []byte(`"version": "`+version()+`"`), []byte(`"version": "0.0.1"`), 1))
	out, stderr = since("--manifest", m2, now1, "--since", other)
	same("a report of another version", out, full2)
	if !strings.Contains(stderr, "made by rollout 0.0.1") {
		t.Errorf("a report of another version: stderr %s", stderr)
	}

	// Another --now: the files whose verdict read the clock are read again.
	live := files["tool-orphan-call.live.jsonl"]
	if !slices.Contains(fileOf(t, full2, live).DependsOn, result.DependsClock) {
		t.Fatalf("%s does not depend on the clock: %+v", live, fileOf(t, full2, live))
	}
	full3 := verify("--manifest", m2, now2)
	out, stderr = since("--manifest", m2, now2, "--since", prev2)
	same("another --now", out, full3)
	if cmp.Equal(fileOf(t, full2, live).Findings, fileOf(t, full3, live).Findings) {
		t.Errorf("%s is judged alike at both times: the test proves nothing about the clock", live)
	}
	clock := 0
	for _, f := range mustRead(t, full2).Files {
		if slices.Equal(f.DependsOn, []string{result.DependsClock}) {
			clock++
		}
	}
	if _, read := reusedAndRead(t, stderr); read != lineage+clock {
		t.Errorf("another --now: %d read, want %d (the forks and %d judged by the clock)", read, lineage+clock, clock)
	}

	// Hidden findings are counted per file, and read again when --fail-on
	// may count them; the exit code is the full run's.
	hidden := []string{"--manifest", m2, now1, "--show-severity", "error"}
	h := save("hidden.json", verify(hidden...))
	out, _ = since(append(hidden, "--since", h)...)
	same("--show-severity error", out, readFile(t, h))
	failing := append(slices.Clone(hidden), "--fail-on", "warning")
	wantCode, wantOut, _ := runRollout(append(slices.Clone(common), failing...)...)
	gotCode, gotOut, stderr := runRollout(append(slices.Clone(common), append(failing, "--since", h)...)...)
	if gotCode != wantCode || gotOut != wantOut || wantCode != exitFindings {
		t.Errorf("--fail-on warning under --show-severity error: exit %d, want %d (%d)", gotCode, wantCode, exitFindings)
	}
	hiding := 0
	for _, f := range mustRead(t, readFile(t, h)).Files {
		if f.Hidden > 0 && !slices.Contains(f.DependsOn, result.DependsLineage) {
			hiding++
		}
	}
	if _, read := reusedAndRead(t, stderr); read != lineage+hiding || hiding == 0 {
		t.Errorf("--fail-on warning under --show-severity error: %d read, want %d (the forks and the %d files that hid findings)", read, lineage+hiding, hiding)
	}

	// A baseline: results reused under the same one.
	b := filepath.Join(dir, "baseline.json")
	runCLI(t, append(slices.Clone(common), "--manifest", m1, now1, "--write-baseline", b)...)
	withBaseline := []string{"--manifest", m2, now1, "--baseline", b}
	rb := save("rb.json", verify("--manifest", m1, now1, "--baseline", b))
	out, stderr = since(append(withBaseline, "--since", rb)...)
	same("--baseline", out, verify(withBaseline...))
	if reused, _ := reusedAndRead(t, stderr); reused == 0 {
		t.Errorf("--baseline: nothing reused")
	}

	// Sharded: each shard's incremental run, given its own previous report,
	// merges into the full run's report.
	var merged []string
	for k := 1; k <= 2; k++ {
		out, _ = since("--manifest", m2, now1, fmt.Sprintf("--shard=%d/2", k), "--since", shardPrev[k-1])
		merged = append(merged, save(fmt.Sprintf("new-%d.json", k), out))
	}
	_, out = runCLI(t, append([]string{"merge", "--format", "json"}, merged...)...)
	same("two shards merged", out, full2)
}

func mustRead(t *testing.T, data []byte) *result.Report {
	t.Helper()
	r, err := report.ReadJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
