// Command benchtool generates benchmark inputs and measures `rollout`
// against baselines (wc -l, jq, a gjson validate-and-route loop) side by
// side in one run, as docs/performance.md requires. `make bench` runs it.
// It is a harness (internal/testkit): nothing of the product imports it.
//
// Usage:
//
//	benchtool gen -o DIR [-size 200MB] [-files 8 -file-size 25MB] [-seed 1] [-force]
//	benchtool gjson-scan FILE...
//	benchtool profile FILE...
//	benchtool run -rollout PATH -dir DIR [-md FILE] [-reps 3] [-strict]
//	benchtool frames -rollout PATH -dir DIR [-md FILE] [-reps 3]
//	benchtool shapes-gen -o DIR [-fleet-files 5000] ...
//	benchtool shapes -rollout PATH -dir DIR [-md FILE] [-reps 3]
//	benchtool fleet -rollout PATH -dir DIR [-md FILE] [-reps 3] [-rollouts 10000]
//	benchtool homes-gen -o DIR [-rollouts 2000,50000] ...
//	benchtool homes -rollout PATH -dir DIR [-md FILE] [-reps 3]
//	benchtool chains -rollout PATH -dir DIR [-md FILE] [-reps 5] [-depths 50,200]
//	benchtool startcost -rollout PATH [-symbols PATH] [-md FILE] [-starts 21]
//	benchtool cat FILE|DIR...
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

const usage = `usage:
  benchtool gen -o DIR [-size 200MB] [-files 8] [-file-size 25MB] [-seed 1] [-force]
      write DIR/big.jsonl and DIR/many/rollout-*.jsonl (skipped when a stamp
      shows they were generated with the same options)
  benchtool gjson-scan FILE...
      baseline "validate and route": per line gjson.ValidBytes + utf8.Valid +
      3 gjson.GetBytes; prints the line count
  benchtool profile FILE...
      bytes and lines per record type, line size distribution
  benchtool run -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-strict]
      measure the baselines and rollout on the files written by gen and print
      a Markdown table and the target checks
  benchtool frames -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-increments 200] [-increment-bytes 1024]
      frame-log reclamation on a generated 200 x 1 KiB stream (about 40 MiB):
      bytes before and after, time of verify and repair; appends to -md
  benchtool shapes-gen -o DIR [-fleet-files 5000] [-fleet-median 100KB] [-fleet-max 200MB]
                [-small-size 200MB] [-patches 30000] [-ids 1000000] [-missing-ids 100000]
                [-long-line 60MB]
      write the workload shapes of DIR/shapes: fleet/ (half .zst), small-lines.jsonl,
      worldstate.jsonl and worldstate-events.jsonl, ids.jsonl, fixes.jsonl, longline.jsonl
  benchtool shapes -rollout BINARY -dir DIR [-md FILE] [-reps 3]
      measure rollout on each shape against the baselines on the same input;
      appends a section to -md
  benchtool fleet -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-rollouts 10000]
      object storage: verify from a SeaweedFS S3 server started here against
      the same bytes on disk (a generated fleet, and gen's big.jsonl), the
      requests of rollout plan and of each shard, and the fleet's wall time
      as 1, 2 and 4 worker processes; appends a section to -md
  benchtool homes-gen -o DIR [-rollouts 2000] [-median 20KB] [-max 4MB] [-sigma 100] [-seed 1]
      write real-shaped Codex homes DIR/homes/home-N: rollouts cut from the files
      real Codex CLIs wrote (conformance goldens), forks and sub-agents among them,
      log-normal sizes, a state database with a threads row per thread
  benchtool homes -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-peers DIR]
      measure rollout's commands on each home against the floor and the peers
      (jq; tokscale and ccusage when installed), memory, and start-up against
      jq's; appends a section to -md
  benchtool chains -rollout BINARY -dir DIR [-md FILE] [-reps 5] [-depths 50,200]
      verify on a home holding one fork chain per depth (DIR/chains/N, generated
      once): the deepest chain against the shallowest, <= 1.25x their ratio
  benchtool startcost -rollout BINARY [-symbols BINARY] [-md FILE] [-starts 21]
      per module: the init clock of a start (GODEBUG=inittrace=1, median of
      the starts) and the bytes of its symbols (go tool nm -size of -symbols,
      a build with its symbol table); appends a section to -md
  benchtool cat FILE|DIR...
      decompressed content of files (directories: their rollouts) to stdout
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "gen":
		err = cmdGen(args)
	case "gjson-scan":
		err = cmdScan(args)
	case "profile":
		err = cmdProfile(args)
	case "run":
		err = cmdRun(args)
	case "frames":
		err = cmdFrames(args) // frames.go
	case "shapes-gen":
		err = cmdShapesGen(args) // shapes.go
	case "shapes":
		err = cmdShapes(args) // shapes_run.go
	case "fleet":
		err = cmdFleet(args) // fleet.go
	case "homes-gen":
		err = cmdHomesGen(args) // homes.go
	case "homes":
		err = cmdHomes(args) // homes_run.go
	case "chains":
		err = cmdChains(args) // chains.go
	case "startcost":
		err = cmdStartcost(args) // startcost.go
	case "cat":
		err = cmdCat(args)
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "benchtool: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		if e, ok := err.(exitError); ok {
			os.Exit(int(e))
		}
		os.Exit(1)
	}
}

// exitError makes main exit with that code after printing nothing more.
type exitError int

func (e exitError) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// parseSize reads "200MB", "25MiB", "1.5GB", "4096" (bytes), "64k".
// kB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	lower := strings.ToLower(t)
	for _, u := range []struct {
		suf string
		m   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},
		{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1},
	} {
		if strings.HasSuffix(lower, u.suf) {
			mult = u.m
			t = strings.TrimSpace(t[:len(t)-len(u.suf)])
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 200MB, 25MiB, 4096)", s)
	}
	return int64(f * float64(mult)), nil
}

func fmtMB(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB" }
