package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/codex/manifest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/internal/testkit/s3server"
)

// fleetRollouts is the size of the fleet the object-storage path is tested
// on (issue 33: at least 10,000 rollouts with forks and sub-agents).
const fleetRollouts = 10_000

// TestFleetOnS3 runs docs/scale.md's fleet recipe against a real
// S3-compatible server (SeaweedFS, started here): rollout plan lists the
// bucket once and reads one head range per object; N worker processes,
// each with JOB_COMPLETION_INDEX set as a Kubernetes Indexed Job sets it,
// verify their slices of the manifest; rollout merge joins their reports
// into one byte for byte equal to a local run over the same files. A
// counting proxy in front of the server checks what each step asks for.
func TestFleetOnS3(t *testing.T) {
	if testing.Short() {
		t.Skip("the fleet on a real S3 server takes a minute: not with -short")
	}
	srv := s3server.Start(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "fleet")
	start := time.Now()
	fleet, err := lineagegen.WriteFleet(local, lineagegen.FleetOptions{Rollouts: fleetRollouts, Seed: 33})
	if err != nil {
		t.Fatal(err)
	}
	forks := 0
	for _, f := range fleet.Files {
		if f.Kind == "fork" || f.Kind == "revert" {
			forks++
		}
	}
	if err := srv.CreateBucket("fleet"); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Upload("fleet", "", local); err != nil || n != fleetRollouts {
		t.Fatalf("uploaded %d objects: %v", n, err)
	}
	t.Logf("fleet: %d rollouts (%d forks and reverts) written and uploaded in %v", fleetRollouts, forks, time.Since(start).Round(time.Millisecond))

	bin := rolloutExecutable(t)
	env := append(os.Environ(), srv.EnvFor(srv.CountingEndpoint())...)
	rollout := func(extra []string, args ...string) (string, time.Duration) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, slices.Concat(env, extra) // workers run at once: no shared array
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		began := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("rollout %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stderr.String(), time.Since(began)
	}
	const now = "2026-12-01T00:00:00Z"

	// One listing and one head range per object.
	srv.ResetCounts()
	say, took := rollout(nil, "plan", "s3://fleet/", "-o", "manifest.jsonl")
	c := srv.ResetCounts()
	pages := (fleetRollouts + 999) / 1000
	if c.List != pages || c.RangedGet != fleetRollouts || c.Get != 0 || c.Head != 0 || c.Failed != 0 {
		t.Errorf("plan: %+v, want %d LIST pages and %d ranged GETs, nothing else", c, pages, fleetRollouts)
	}
	t.Logf("plan: %v, %d requests; %s", took.Round(time.Millisecond), c.Total(), strings.TrimSpace(say))

	// A shard asks for its slice: one GET per rollout (ranged to the size
	// the plan saw), plus, for the rollouts forks and reverts of the slice
	// continue (ranged to the prefix each inherits), at most one per fork
	// and at least one per source: the replay keeps inherited prefixes
	// (reconstruct's lineage memo), so a source several forks continue may
	// be read once. Nothing else.
	const n = 4
	shardMin, shardMax := 0, 0
	for k := 1; k <= n; k++ {
		part := &shard.Spec{K: k, N: n}
		_, slice, err := manifest.Read(filepath.Join(dir, "manifest.jsonl"), nil, part)
		if err != nil {
			t.Fatal(err)
		}
		segments, sources := sourceReads(slice)
		srv.ResetCounts()
		rollout([]string{shard.IndexVar + "=" + fmt.Sprint(k-1)}, "verify", "--manifest", "manifest.jsonl", "--shard", fmt.Sprintf("index/%d", n),
			"--now", now, "--fail-on", "never", "--format", fmt.Sprintf("json=reports/verify-%d.json", k-1))
		c := srv.ResetCounts()
		shardMin += len(slice) + sources
		shardMax += len(slice) + segments
		if c.RangedGet < len(slice)+sources || c.RangedGet > len(slice)+segments || c.Total() != c.RangedGet || c.Failed != 0 {
			t.Errorf("shard %d/%d: %+v; want %d to %d ranged GETs (its slice of %d, and its forks' %d sources, %d reads without sharing), nothing else",
				k, n, c, len(slice)+sources, len(slice)+segments, len(slice), sources, segments)
		}
	}

	// The shards' merged report is a local run's over the same files.
	rollout(nil, "merge", "--format", "json=merged.json", "reports")
	rollout(nil, "verify", "--now", now, "--fail-on", "never", "--format", "json=local.json", "fleet")
	merged, err := os.ReadFile(filepath.Join(dir, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "local.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The same bytes, but not the same store: each file's version is the
	// object's ETag in one, the file's modification time in the other.
	got := versionRE.ReplaceAll(bytes.ReplaceAll(merged, []byte("s3://fleet/"), []byte("fleet/")), []byte(`"version": V`))
	if want := versionRE.ReplaceAll(want, []byte(`"version": V`)); !bytes.Equal(got, want) {
		t.Errorf("the merged report of the shards on S3 differs from the local run's (s3://fleet/ read as fleet/, versions aside): %s", firstDiff(got, want))
	}
	var report struct {
		Files []struct {
			Findings []json.RawMessage `json:"findings"`
		} `json:"files"`
	}
	if err := json.Unmarshal(want, &report); err != nil || len(report.Files) != fleetRollouts {
		t.Fatalf("the local report has %d files (%v), want %d", len(report.Files), err, fleetRollouts)
	}

	// The recipe as the Indexed Job runs it: the N processes at once,
	// asking together for what they asked one by one.
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rollout([]string{shard.IndexVar + "=" + fmt.Sprint(i)}, "verify", "--manifest", "manifest.jsonl",
				"--shard", fmt.Sprintf("index/%d", n), "--jobs", "1", "--now", now, "--fail-on", "never",
				"--format", fmt.Sprintf("json=together/verify-%d.json", i))
		})
	}
	wg.Wait()
	if c := srv.ResetCounts(); c.RangedGet < shardMin || c.RangedGet > shardMax || c.Total() != c.RangedGet || c.Failed != 0 {
		t.Errorf("%d shards at once: %+v, want %d to %d ranged GETs, as one by one", n, c, shardMin, shardMax)
	}
	rollout(nil, "merge", "--format", "json=together.json", "together")
	if got, err := os.ReadFile(filepath.Join(dir, "together.json")); err != nil || !bytes.Equal(got, merged) {
		t.Errorf("%d shards at once: the merged report differs from the shards' run one by one (%v)", n, err)
	}
}

var versionRE = regexp.MustCompile(`"version": "(?:[^"\\]|\\.)*"`)

// sourceReads counts the reads of other rollouts the forks and reverts of
// a slice make when nothing is shared (one per rollout each continues,
// through its whole chain), and the distinct rollouts they continue.
func sourceReads(slice []manifest.Entry) (reads, sources int) {
	byID := map[string]*manifest.Entry{}
	for i := range slice {
		byID[slice[i].RolloutID] = &slice[i]
	}
	seen := map[string]bool{}
	for i := range slice {
		for e := &slice[i]; e != nil && e.Meta != nil && e.Meta.Base != nil; {
			reads++
			if id := e.Meta.Base.RolloutID; !seen[id] {
				seen[id], sources = true, sources+1
			}
			e = byID[e.Meta.Base.RolloutID]
		}
	}
	return reads, sources
}

// rolloutExecutable is the test binary under the name "rollout", which
// TestMain runs as the command: worker processes without a build.
func rolloutExecutable(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rollout")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// firstDiff shows where two reports first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n got …%s…\nwant …%s…", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}
