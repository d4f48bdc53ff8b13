package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	manifestpkg "github.com/rollout-dev/rollout/internal/codex/manifest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/internal/testkit/s3server"
)

// cmdFleet measures the object-storage path (docs/scale.md) against a real
// S3-compatible server started here (SeaweedFS, s3server): verify of the
// same bytes from the bucket and from the disk, a 10,000-rollout fleet and
// one big rollout; the requests rollout plan and each shard make; and the
// fleet's wall time as 1, 2 and 4 worker processes of an Indexed Job.
func cmdFleet(args []string) error {
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to measure (required)")
	dir := fs.String("dir", "", "directory of gen's big.jsonl; the fleet is written under it (required)")
	md := fs.String("md", "", "also write the report into this Markdown file (its section `fleet`)")
	reps := fs.Int("reps", 3, "rounds: each command runs once per round")
	rollouts := fs.Int("rollouts", 10_000, "rollouts of the fleet")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit per command run")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *bin == "" || *dir == "" || fs.NArg() > 0 || *reps < 1 || *rollouts < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool fleet -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-rollouts 10000]")
		return exitError(2)
	}
	if _, ok := s3server.Installed(); !ok {
		msg := "SeaweedFS is not built: the object-storage benchmark is skipped (go run ./internal/testkit/s3server/internal/build)"
		fmt.Fprintln(os.Stderr, "benchtool fleet: "+msg)
		if *md != "" {
			return writeSection(*md, "fleet", "## Object storage\n\n"+msg+".\n")
		}
		return nil
	}
	if p, err := filepath.Abs(*bin); err == nil {
		*bin = p
	}
	tb := &toolTB{name: "benchtool-fleet"}
	defer tb.cleanup()
	srv, err := startServer(tb)
	if err != nil {
		return err
	}

	fleetDir := filepath.Join(*dir, fmt.Sprintf("fleet-%d", *rollouts))
	if _, err := os.Stat(fleetDir); err != nil {
		if _, err := lineagegen.WriteFleet(fleetDir, lineagegen.FleetOptions{Rollouts: *rollouts, Seed: 33}); err != nil {
			return err
		}
	}
	big := filepath.Join(*dir, "big.jsonl")
	bigInfo, err := os.Stat(big)
	if err != nil {
		return fmt.Errorf("%s: run benchtool gen first: %w", big, err)
	}
	for _, b := range []string{"fleet", "big"} {
		if err := srv.CreateBucket(b); err != nil {
			return err
		}
	}
	began := time.Now()
	if _, err := srv.Upload("fleet", "", fleetDir); err != nil {
		return err
	}
	bigDir := filepath.Dir(big)
	if err := uploadOne(srv, "big", bigDir, big); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchtool fleet: uploaded in %v\n", time.Since(began).Round(time.Millisecond))
	fleetBytes := treeBytes(fleetDir)

	scratch, err := os.MkdirTemp("", "benchtool-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	env := append(os.Environ(), srv.EnvFor(srv.CountingEndpoint())...)
	manifest := filepath.Join(scratch, "manifest.jsonl")
	requests, shardGets, err := countRequests(srv, *bin, env, manifest)
	if err != nil {
		return err
	}

	verify := func(in string) []string {
		return []string{*bin, "verify", "--fail-on", "never", "--now", "2026-12-01T00:00:00Z", "--format", "json", "-o", os.DevNull, in}
	}
	workers := func(n int) []string {
		script := fmt.Sprintf(`for i in $(seq 0 %d); do JOB_COMPLETION_INDEX=$i %q verify --manifest %q --shard index/%d --jobs 1 --now 2026-12-01T00:00:00Z --fail-on never --format json -o /dev/null & done; wait`,
			n-1, *bin, manifest, n)
		return []string{"sh", "-c", script}
	}
	rows := []*row{
		{key: "fleet-disk", input: fmt.Sprintf("%d rollouts, disk", *rollouts), name: "rollout verify DIR", argv: verify(fleetDir), maxExit: 1, bytes: fleetBytes},
		{key: "fleet-s3", input: fmt.Sprintf("%d rollouts, S3", *rollouts), name: "rollout verify s3://fleet/", argv: verify("s3://fleet/"), maxExit: 1, bytes: fleetBytes},
		{key: "big-disk", input: "big.jsonl, disk", name: "rollout verify FILE", argv: verify(big), maxExit: 1, bytes: bigInfo.Size()},
		{key: "big-s3", input: "big.jsonl, S3", name: "rollout verify s3://big/big.jsonl", argv: verify("s3://big/big.jsonl"), maxExit: 1, bytes: bigInfo.Size()},
	}
	for _, n := range []int{1, 2, 4} {
		rows = append(rows, &row{key: fmt.Sprintf("workers-%d", n), input: fmt.Sprintf("%d rollouts, S3", *rollouts),
			name: fmt.Sprintf("%d worker processes, --shard index/%d --jobs 1", n, n), argv: workers(n), maxExit: 1, bytes: fleetBytes})
	}
	for _, kv := range srv.Env() { // the server itself: no counting proxy in the timed runs
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	var load loadLog
	runRounds(rows, *reps, *timeout, strings.NewReplacer(), &load)

	serverCPU := serverCPUOf(srv.PID, verify("s3://fleet/"))
	delayed := delayedRun(srv, []string{*bin, "verify", "--manifest", manifest, "--fail-on", "never", "--format", "json", "-o", os.DevNull})

	var b strings.Builder
	fmt.Fprintf(&b, "## Object storage\n\n`benchtool fleet` (`make bench`): a SeaweedFS S3 server on loopback (%s), started by the\n", s3server.Version)
	fmt.Fprintf(&b, "benchmark, on the same machine (its CPU is not in rollout's CPU column; wall time includes it).\n")
	fmt.Fprintf(&b, "The fleet: %d generated rollouts (lineagegen.WriteFleet, seed 33: forks, reverts,\n", *rollouts)
	fmt.Fprintf(&b, "sub-agents), %s MiB; big.jsonl: %s MiB. %s.\n\n", fmtMiB(fleetBytes/1024), fmtMiB(bigInfo.Size()/1024), load.String())
	b.WriteString(rowTable(rows, *reps))
	if serverCPU > 0 {
		fmt.Fprintf(&b, "\nThe server's own CPU for one `rollout verify s3://fleet/` (%d GETs and %d LISTs): %.2f s, %.2f ms a request\n(rollout's: the CPU column). On this machine the store and rollout share the cores.\n",
			*rollouts, (*rollouts+999)/1000, serverCPU.Seconds(), serverCPU.Seconds()*1000/float64(*rollouts+(*rollouts+999)/1000))
	}
	if delayed > 0 {
		fmt.Fprintf(&b, "\nThrough a proxy that holds each request %v (a store across a network), `rollout verify --manifest`\n"+
			"over the fleet took %.1f s of wall time: its %d requests (below) waited for one by one on its %d workers would take %.0f s.\n",
			storeDelay, delayed.Seconds(), shardGets, runtime.NumCPU(), storeDelay.Seconds()*float64(shardGets)/float64(runtime.NumCPU()))
	}
	b.WriteString("\nRequests (counted by a proxy in front of the server):\n\n")
	b.WriteString(requests)
	t := newTargets(rows)
	t.atLeast("fleet from S3 / from disk, throughput (wall)", "fleet-s3", "fleet-disk", 0.8, true)
	t.atLeast("big rollout from S3 / from disk, throughput (wall)", "big-s3", "big-disk", 0.8, true)
	b.WriteString("\n")
	for _, l := range t.lines {
		b.WriteString("- " + l + "\n")
	}
	fmt.Print(b.String())
	if *md != "" {
		return writeSection(*md, "fleet", b.String())
	}
	return nil
}

// countRequests plans the fleet and runs each of 4 shards alone through
// the counting proxy, and tabulates what each asked for.
func countRequests(srv *s3server.Server, bin string, env []string, manifest string) (table string, shardGets int, err error) {
	run := func(extra []string, args ...string) error {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(env, extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("rollout %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	var b strings.Builder
	b.WriteString("| step | GET (ranged) | GET (whole) | HEAD | LIST | rollouts read |\n|---|---:|---:|---:|---:|---:|\n")
	srv.ResetCounts()
	if err := run(nil, "plan", "s3://fleet/", "-o", manifest); err != nil {
		return "", 0, err
	}
	c := srv.ResetCounts()
	_, entries, err := manifestpkg.Read(manifest, nil, nil)
	if err != nil {
		return "", 0, err
	}
	fmt.Fprintf(&b, "| `rollout plan s3://fleet/` | %d | %d | %d | %d | %d heads |\n", c.RangedGet, c.Get, c.Head, c.List, len(entries))
	const n = 4
	for i := range n {
		if err := run([]string{"JOB_COMPLETION_INDEX=" + fmt.Sprint(i)}, "verify", "--manifest", manifest, "--shard", fmt.Sprintf("index/%d", n),
			"--fail-on", "never", "--format", "json", "-o", os.DevNull); err != nil {
			return "", 0, err
		}
		c := srv.ResetCounts()
		shardGets += c.Total()
		fmt.Fprintf(&b, "| `verify --manifest --shard %d/%d` | %d | %d | %d | %d | |\n", i+1, n, c.RangedGet, c.Get, c.Head, c.List)
	}
	return b.String(), shardGets, nil
}

func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// uploadOne puts one file of dir into bucket by its name.
func uploadOne(srv *s3server.Server, bucket, dir, file string) error {
	tmp, err := os.MkdirTemp("", "benchtool-upload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Link(file, filepath.Join(tmp, filepath.Base(file))); err != nil {
		if err := os.Symlink(file, filepath.Join(tmp, filepath.Base(file))); err != nil {
			return err
		}
	}
	_, err = srv.Upload(bucket, "", tmp)
	return err
}

// toolTB lets a tool start what tests start (s3server.Start takes a
// testing.TB): the methods the harness calls, cleanups run by cleanup.
type toolTB struct {
	testing.TB
	name     string
	cleanups []func()
	failed   string
	dirs     []string
}

func (t *toolTB) Helper()                 {}
func (t *toolTB) Name() string            { return t.name }
func (t *toolTB) Cleanup(f func())        { t.cleanups = append(t.cleanups, f) }
func (t *toolTB) Failed() bool            { return t.failed != "" }
func (t *toolTB) Logf(f string, a ...any) { fmt.Fprintf(os.Stderr, "s3server: "+f+"\n", a...) }
func (t *toolTB) Fatalf(f string, a ...any) {
	t.failed = fmt.Sprintf(f, a...)
	panic(t)
}
func (t *toolTB) Skipf(f string, a ...any) { t.Fatalf(f, a...) }
func (t *toolTB) TempDir() string {
	d, err := os.MkdirTemp("", t.name+"-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.dirs = append(t.dirs, d)
	return d
}

// startServer is s3server.Start, its Fatalf an error.
func startServer(tb *toolTB) (srv *s3server.Server, err error) {
	defer func() {
		if v := recover(); v == any(tb) {
			err = fmt.Errorf("starting SeaweedFS: %s", tb.failed)
		} else if v != nil {
			panic(v)
		}
	}()
	return s3server.Start(tb), nil
}

func (t *toolTB) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	for _, d := range t.dirs {
		os.RemoveAll(d)
	}
}

// serverCPUOf runs argv once and returns the CPU time the process pid (the
// store) spent meanwhile (0 where /proc cannot tell).
func serverCPUOf(pid int, argv []string) time.Duration {
	ticks := func() int64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return -1
		}
		// The fields after the command name (which may hold spaces).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return -1
		}
		var u, s int64
		fmt.Sscan(f[11], &u)
		fmt.Sscan(f[12], &s)
		return u + s
	}
	before := ticks()
	if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil || before < 0 {
		return 0
	}
	after := ticks()
	return time.Duration(after-before) * (time.Second / 100) // USER_HZ
}

// storeDelay is what delayedRun adds to every request.
const storeDelay = 20 * time.Millisecond

// delayedRun runs argv once against the store through a proxy that holds
// each request storeDelay, and returns its wall time (0 on failure).
func delayedRun(srv *s3server.Server, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), srv.EnvFor(srv.DelayedEndpoint(storeDelay))...)
	began := time.Now()
	if err := cmd.Run(); err != nil {
		return 0
	}
	return time.Since(began)
}
