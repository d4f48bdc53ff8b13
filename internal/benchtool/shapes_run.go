package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shapeRow is one measured command on one shape. argv placeholders:
// {rollout}, {self}, {in} (the shape's path).
type shapeRow struct {
	key   string
	input string // a shape name
	name  string
	argv  []string
	needs string
}

func shapeRows() []shapeRow {
	gjson := func(in string) shapeRow {
		return shapeRow{key: in + "/gjson", input: in, name: "benchtool gjson-scan", argv: []string{"{self}", "gjson-scan", "{in}"}}
	}
	jq := func(in string) shapeRow {
		// One jq over the decompressed stream: the cheapest way a user
		// gets jq over a directory of plain and .zst files.
		return shapeRow{key: in + "/jq", input: in, name: "jq -c .type", needs: "jq",
			argv: []string{"sh", "-c", `"$0" cat "$1" | jq -c .type >/dev/null`, "{self}", "{in}"}}
	}
	verify := func(in string, args ...string) shapeRow {
		name := strings.Join(append([]string{"rollout verify"}, args...), " ")
		return shapeRow{key: in + "/verify" + strings.Join(args, ""), input: in, name: name,
			argv: append(append([]string{"{rollout}", "verify"}, args...), "{in}")}
	}
	return []shapeRow{
		gjson(shapeFleet), jq(shapeFleet), verify(shapeFleet, "--jobs", "1"), verify(shapeFleet, "--jobs", "2"),
		{key: shapeFleet + "/space", input: shapeFleet, name: "rollout space --jobs 2", argv: []string{"{rollout}", "space", "--jobs", "2", "{in}"}},
		gjson(shapeSmall), jq(shapeSmall), verify(shapeSmall),
		gjson(shapeWorld), verify(shapeWorld), verify(shapeWorldEvents),
		gjson(shapeIDs), verify(shapeIDs),
		gjson(shapeFixes), verify(shapeFixes),
		{key: shapeFixes + "/repair", input: shapeFixes, name: "rollout repair (dry run)", argv: []string{"{rollout}", "repair", "{in}"}},
		verify(shapeLong),
		{key: shapeLong + "/repair", input: shapeLong, name: "rollout repair (dry run)", argv: []string{"{rollout}", "repair", "{in}"}},
	}
}

func cmdShapes(args []string) error {
	fs := flag.NewFlagSet("shapes", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to measure (required)")
	dir := fs.String("dir", "", "directory written by `benchtool shapes-gen` (required)")
	md := fs.String("md", "", "append the report (Markdown) to this file")
	reps := fs.Int("reps", 3, "repetitions per command (best wall time wins)")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit per command run")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *bin == "" || *dir == "" || fs.NArg() > 0 || *reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool shapes -rollout BINARY -dir DIR [-md FILE] [-reps 3]")
		return exitError(2)
	}
	if p, err := filepath.Abs(*bin); err == nil && strings.ContainsRune(*bin, os.PathSeparator) {
		*bin = p
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	root := filepath.Join(*dir, "shapes")
	b, err := os.ReadFile(filepath.Join(root, shapesStamp))
	if err != nil {
		return fmt.Errorf("%w (run `benchtool shapes-gen -o %s` first)", err, *dir)
	}
	var spec shapesSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	unlock, err := lockDir(*dir, false)
	if err != nil {
		return err
	}
	defer unlock()

	var hdr strings.Builder
	sizes := map[string]int64{}
	for _, name := range []string{shapeSmall, shapeWorld, shapeWorldEvents, shapeIDs, shapeFixes, shapeLong} {
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			return err
		}
		sizes[name] = fi.Size()
	}
	paths, fleetBytes, err := fleetFiles(filepath.Join(root, shapeFleet))
	if err != nil {
		return err
	}
	sizes[shapeFleet] = fleetBytes
	fileSizes := make([]int64, 0, len(paths))
	zst := 0
	for _, p := range paths {
		fi, _ := os.Stat(p)
		fileSizes = append(fileSizes, fi.Size())
		if strings.HasSuffix(p, ".zst") {
			zst++
		}
	}
	slices.Sort(fileSizes)
	if len(fileSizes) == 0 {
		return fmt.Errorf("%s holds no rollout: shapes measures the fleet too (shapes-gen -fleet-files > 0)", filepath.Join(root, shapeFleet))
	}
	fmt.Fprintf(&hdr, "- fleet/: %d files (%d `.zst`), %s on disk; sizes on disk: min %s, median %s, max %s (targets drawn log-normal, median %s, sigma %.2f, clamped to 5 KB..%s, one file at the maximum); `.zst` files count with their compressed size\n",
		len(paths), zst, fmtMB(fleetBytes), fmtKB(fileSizes[0]), fmtKB(fileSizes[len(fileSizes)/2]), fmtMB(fileSizes[len(fileSizes)-1]),
		fmtKB(spec.FleetMedian), float64(spec.FleetSigmaX100)/100, fmtMB(spec.FleetMax))
	fmt.Fprintf(&hdr, "- small-lines.jsonl: %s of 150-400 byte event lines (an item every 8 lines)\n", fmtMB(sizes[shapeSmall]))
	fmt.Fprintf(&hdr, "- worldstate.jsonl: %s, %d world-state patches each adding 1-3 keys, each after a reasoning item; worldstate-events.jsonl: the same with every patch line replaced by an `event_msg` line of the same size\n", fmtMB(sizes[shapeWorld]), spec.Patches)
	fmt.Fprintf(&hdr, "- ids.jsonl: %s, %d items with ids in turns of about 20; fixes.jsonl: %s, %d items without id among as many with one\n", fmtMB(sizes[shapeIDs]), spec.IDs, fmtMB(sizes[shapeFixes]), spec.MissingIDs)
	fmt.Fprintf(&hdr, "- longline.jsonl: %s, a short session whose one tool output (without id, so repair edits it) is %s of text\n", fmtMB(sizes[shapeLong]), fmtMB(spec.LongLine))
	fmt.Print(hdr.String())

	// Page cache warm-up.
	if err := cmdCatTo(os.DevNull, root); err != nil {
		return err
	}
	rows := shapeRows()
	res := make([]*rowResult, len(rows))
	for i, r := range rows {
		res[i] = &rowResult{spec: rowSpec{key: r.key, name: r.name}, bytes: sizes[r.input]}
		if r.needs != "" {
			if _, err := exec.LookPath(r.needs); err != nil {
				res[i].state, res[i].note = stSkipped, "skipped ("+r.needs+" not on PATH)"
			}
		}
	}
	for round := 0; round < *reps; round++ {
		for i, r := range rows {
			if res[i].state != stMeasured {
				continue
			}
			in := filepath.Join(root, r.input)
			argv := make([]string, len(r.argv))
			for k, a := range r.argv {
				argv[k] = strings.NewReplacer("{rollout}", *bin, "{self}", self, "{in}", in).Replace(a)
			}
			m := measure(argv, *timeout)
			fmt.Fprintf(os.Stderr, "  [%d/%d] %-24s %-28s %8.3fs  exit %d  rss %d KiB\n", round+1, *reps, r.input, r.name, m.wall.Seconds(), m.exit, m.rssKiB)
			switch {
			case m.err != nil:
				res[i].state, res[i].note = stFailed, "FAILED: "+m.err.Error()
			case m.exit < 0 || m.exit > 1:
				res[i].state, res[i].note = stFailed, fmt.Sprintf("FAILED (exit %d): %s", m.exit, oneLine(m.stderr, 200))
			default:
				if res[i].runs == 0 || m.wall < res[i].best {
					res[i].best = m.wall
				}
				if res[i].runs == 0 || m.cpu < res[i].cpu {
					res[i].cpu = m.cpu
				}
				res[i].runs++
				res[i].rssKiB = max(res[i].rssKiB, m.rssKiB)
			}
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "\n| input | command | wall s (best of %d) | MB/s | CPU s (best) | peak RSS MiB |\n|---|---|---:|---:|---:|---:|\n", *reps)
	by := map[string]*rowResult{}
	for i, r := range rows {
		x := res[i]
		by[r.key] = x
		if x.state != stMeasured {
			fmt.Fprintf(&out, "| %s | `%s` | %s | | | |\n", r.input, r.name, x.note)
			continue
		}
		fmt.Fprintf(&out, "| %s | `%s` | %.3f | %s | %.3f | %s |\n", r.input, r.name, x.best.Seconds(), fmtRate(x.mbps()), x.cpu.Seconds(), fmtMiB(x.rssKiB))
	}
	out.WriteString("\n")
	for _, l := range shapeTargets(by) {
		out.WriteString(l + "\n")
	}
	fmt.Print(out.String())
	if *md == "" {
		return nil
	}
	f, err := os.OpenFile(*md, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "\n## Real workloads (issue 12)\n\nGenerated by `benchtool shapes-gen` and measured by `benchtool shapes` (`make bench`):\n\n```\n%s\n```\n\n%s%s", commandLine(), hdr.String(), out.String())
	return nil
}

func fmtKB(n int64) string { return strconv.FormatFloat(float64(n)/1e3, 'f', 0, 64) + " KB" }

// shapeTargets evaluates the targets of issue 12.
func shapeTargets(by map[string]*rowResult) []string {
	var lines []string
	ok := func(keys ...string) bool {
		for _, k := range keys {
			if r := by[k]; r == nil || r.state != stMeasured || r.runs == 0 {
				lines = append(lines, fmt.Sprintf("target needs `%s`: n/a", k))
				return false
			}
		}
		return true
	}
	verdict := func(pass bool) string {
		if pass {
			return "PASS"
		}
		return "FAIL"
	}
	// Verdicts go by wall time, as the issue states the targets; the CPU
	// ratio beside it is steadier on a shared machine.
	ratio := func(name, a, b string, limit float64) { // time(a)/time(b) <= limit
		if ok(a, b) {
			x := by[a].best.Seconds() / by[b].best.Seconds()
			c := by[a].cpu.Seconds() / by[b].cpu.Seconds()
			lines = append(lines, fmt.Sprintf("target %s <= %gx: %.2fx %s (CPU time ratio %.2fx)", name, limit, x, verdict(x <= limit), c))
		}
	}
	rss := func(name, key string, limit float64) {
		if ok(key) {
			mib := float64(by[key].rssKiB) / 1024
			lines = append(lines, fmt.Sprintf("target %s peak RSS <= %g MiB: %.0f MiB %s", name, limit, mib, verdict(mib <= limit)))
		}
	}
	rss("fleet/ verify --jobs 2", "fleet/verify--jobs2", 150)
	if ok("fleet/verify--jobs1", "fleet/jq") {
		x := by["fleet/jq"].best.Seconds() / by["fleet/verify--jobs1"].best.Seconds()
		c := by["fleet/jq"].cpu.Seconds() / by["fleet/verify--jobs1"].cpu.Seconds()
		lines = append(lines, fmt.Sprintf("target fleet/ verify --jobs 1 throughput >= 3x jq: %.1fx %s (CPU time ratio %.1fx)", x, verdict(x >= 3), c))
	}
	ratio("fleet/ verify --jobs 1 time / gjson-scan time", "fleet/verify--jobs1", "fleet/gjson", 1.5)
	ratio("small-lines verify time / gjson-scan time", shapeSmall+"/verify", shapeSmall+"/gjson", 1.5)
	ratio("worldstate verify time / worldstate-events verify time", shapeWorld+"/verify", shapeWorldEvents+"/verify", 2)
	rss("ids.jsonl verify", shapeIDs+"/verify", 250)
	ratio("fixes.jsonl repair dry-run time / verify time", shapeFixes+"/repair", shapeFixes+"/verify", 2)
	rss("fixes.jsonl repair dry run", shapeFixes+"/repair", 400)
	// A line costs about its size once (issue 11): verify holds the line,
	// repair the line and its edited copy; 40 MiB is the small-file
	// baseline and its slack.
	if r := by[shapeLong+"/verify"]; r != nil {
		line := float64(r.bytes) / (1 << 20)
		rss("longline.jsonl verify", shapeLong+"/verify", math.Round(1.5*line+40))
		rss("longline.jsonl repair dry run", shapeLong+"/repair", math.Round(2.5*line+40))
	}
	return lines
}

// cmdCatTo reads every shape file once (page cache warm-up).
func cmdCatTo(dst, root string) error {
	f, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.Open(p)
		if err != nil {
			return err
		}
		defer b.Close()
		_, err = f.ReadFrom(b)
		return err
	})
}
