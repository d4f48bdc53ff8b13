package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shapeRows are the measured commands on the shapes. argv placeholders:
// {rollout}, {self}, {in} (the shape's path), {out} (a scratch output).
func shapeRows() []*row {
	gjson := func(in string) *row {
		return &row{key: in + "/gjson", input: in, name: "benchtool gjson-scan", argv: []string{"{self}", "gjson-scan", "{in}"}}
	}
	jq := func(in string) *row {
		// One jq over the decompressed stream: the cheapest way a user
		// gets jq over a directory of plain and .zst files.
		return &row{key: in + "/jq", input: in, name: "jq -c .type", needs: "jq",
			argv: []string{"sh", "-c", `"$0" cat "$1" | jq -c .type >/dev/null`, "{self}", "{in}"}}
	}
	jqFile := func(in string) *row { // one file: jq reads it itself
		return &row{key: in + "/jq", input: in, name: "jq -c .type", needs: "jq", argv: []string{"jq", "-c", ".type", "{in}"}}
	}
	cmd := func(in, key, name string, args ...string) *row {
		return &row{key: in + "/" + key, input: in, name: "rollout " + name, maxExit: 1,
			argv: append(append([]string{"{rollout}"}, args...), "{in}")}
	}
	verify := func(in string, args ...string) *row {
		name := strings.Join(append([]string{"verify"}, args...), " ")
		return cmd(in, "verify"+strings.Join(args, ""), name, append([]string{"verify"}, args...)...)
	}
	repair := func(in string) *row { return cmd(in, "repair", "repair (dry run)", "repair") }
	write := func(in string) *row {
		return cmd(in, "repair-write", "repair --write -o OUT", "repair", "--write", "-o", "{out}")
	}
	return []*row{
		gjson(shapeFleet), jq(shapeFleet), verify(shapeFleet, "--jobs", "1"), verify(shapeFleet, "--jobs", "2"),
		cmd(shapeFleet, "space", "space --jobs 2", "space", "--jobs", "2"),
		cmd(shapeFleet, "reclaim", "reclaim --policy superseded-checkpoints,duplicate-exec-output (dry run)", "reclaim", "--policy", "superseded-checkpoints,duplicate-exec-output"),
		gjson(shapeTree), gjson(shapeTreeOne), verify(shapeTree, "--jobs", "1"), verify(shapeTreeOne),
		gjson(shapeSmall), jq(shapeSmall), verify(shapeSmall),
		gjson(shapeRecords), jqFile(shapeRecords), pythonRow(shapeRecords+"/python", shapeRecords, "{in}"), verify(shapeRecords),
		gjson(shapeWorld), verify(shapeWorld), verify(shapeWorldEvents),
		gjson(shapeIDs), verify(shapeIDs),
		gjson(shapeFixes), verify(shapeFixes), repair(shapeFixes), write(shapeFixes),
		verify(shapeFewFixes), repair(shapeFewFixes),
		verify(shapeLong), repair(shapeLong),
	}
}

func cmdShapes(args []string) error {
	fs := flag.NewFlagSet("shapes", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to measure (required)")
	dir := fs.String("dir", "", "directory written by `benchtool shapes-gen` (required)")
	md := fs.String("md", "", "also write the report into this Markdown file (its section `shapes`)")
	reps := fs.Int("reps", 5, "rounds: each command runs once per round")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit per command run")
	only := fs.String("only", "", "measure only the rows whose input is one of these (comma-separated shape names)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *bin == "" || *dir == "" || fs.NArg() > 0 || *reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool shapes -rollout BINARY -dir DIR [-md FILE] [-reps 5] [-only SHAPE,...]")
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
	if spec.Version != shapesVersion {
		return fmt.Errorf("%s was written by shapes-gen version %d, this is %d: run `benchtool shapes-gen -o %s` again", root, spec.Version, shapesVersion, *dir)
	}
	unlock, err := lockDir(*dir, false)
	if err != nil {
		return err
	}
	defer unlock()

	var hdr strings.Builder
	sizes := map[string]int64{}
	for _, name := range []string{shapeSmall, shapeRecords, shapeWorld, shapeWorldEvents, shapeIDs, shapeFixes, shapeFewFixes, shapeLong, shapeTreeOne} {
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
	treePaths, treeBytes, err := fleetFiles(filepath.Join(root, shapeTree))
	if err != nil {
		return err
	}
	sizes[shapeTree] = treeBytes
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
	if len(fileSizes) == 0 || len(treePaths) == 0 {
		return fmt.Errorf("%s or %s holds no rollout: shapes measures both (shapes-gen -fleet-files and -tree-files > 0)", filepath.Join(root, shapeFleet), filepath.Join(root, shapeTree))
	}
	fmt.Fprintf(&hdr, "- fleet/: %d files (%d `.zst`), %s on disk; sizes on disk: min %s, median %s, max %s (targets drawn log-normal, median %s, sigma %.2f, clamped to 5 KB..%s, one file at the maximum); `.zst` files count with their compressed size\n",
		len(paths), zst, fmtMB(fleetBytes), fmtKB(fileSizes[0]), fmtKB(fileSizes[len(fileSizes)/2]), fmtMB(fileSizes[len(fileSizes)-1]),
		fmtKB(spec.FleetMedian), float64(spec.FleetSigmaX100)/100, fmtMB(spec.FleetMax))
	fmt.Fprintf(&hdr, "- tree/: %d plain files of about %s (`internal/testkit/fixturegen/gen`), %s; tree.jsonl: the same bytes in one file\n", len(treePaths), fmtKB(spec.TreeFileBytes), fmtMB(treeBytes))
	fmt.Fprintf(&hdr, "- small-lines.jsonl: %s of 150-400 byte event lines (an item every 8 lines)\n", fmtMB(sizes[shapeSmall]))
	fmt.Fprintf(&hdr, "- small-records.jsonl: %s of small records as Codex 0.110 writes them: reasoning deltas, reasoning items, shell calls with short outputs, a token_count with rate limits per request\n", fmtMB(sizes[shapeRecords]))
	fmt.Fprintf(&hdr, "- worldstate.jsonl: %s, %d world-state patches each adding 1-3 keys, each after a reasoning item; worldstate-events.jsonl: the same with every patch line replaced by an `event_msg` line of the same size\n", fmtMB(sizes[shapeWorld]), spec.Patches)
	fmt.Fprintf(&hdr, "- ids.jsonl: %s, %d items with ids in turns of about 20; fixes.jsonl: %s, %d items without id among as many with one; fixes-few.jsonl: %s, as many items, %d of them without id\n",
		fmtMB(sizes[shapeIDs]), spec.IDs, fmtMB(sizes[shapeFixes]), spec.MissingIDs, fmtMB(sizes[shapeFewFixes]), spec.FewFixes)
	fmt.Fprintf(&hdr, "- longline.jsonl: %s, a short session whose one tool output (without id, so repair edits it) is %s of text\n", fmtMB(sizes[shapeLong]), fmtMB(spec.LongLine))

	// Page cache warm-up.
	if err := cmdCatTo(os.DevNull, root); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "benchtool-shapes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	out := filepath.Join(scratch, "out.jsonl")
	var rows []*row
	keep := map[string]bool{}
	for _, k := range strings.Split(*only, ",") {
		if k != "" {
			keep[k] = true
		}
	}
	for _, r := range shapeRows() {
		if len(keep) > 0 && !keep[r.input] {
			continue
		}
		r.bytes = sizes[r.input]
		// The shape's path goes in by its own placeholder: {in} is
		// replaced per row below.
		for i, a := range r.argv {
			r.argv[i] = strings.ReplaceAll(a, "{in}", filepath.Join(root, r.input))
		}
		r.before = func() { removeOutputs(out) }
		rows = append(rows, r)
	}
	var load loadLog
	start := time.Now()
	runRounds(rows, *reps, *timeout, strings.NewReplacer("{rollout}", *bin, "{self}", self, "{out}", out), &load)

	var rep strings.Builder
	fmt.Fprintf(&rep, "```sh\n%s\n```\n\n", commandLine())
	fmt.Fprintf(&rep, "- date: %s; %s\n", start.UTC().Format("2006-01-02 15:04 UTC"), load.String())
	fmt.Fprintf(&rep, "- %d rounds, each running every command once; ratios are taken round by round (paired runs) and given as median (range)\n", *reps)
	rep.WriteString(hdr.String())
	rep.WriteString("\n")
	rep.WriteString(rowTable(rows, *reps))
	t := shapeTargets(rows, spec, len(treePaths))
	rep.WriteString("\n")
	for _, l := range t.lines {
		rep.WriteString(l + "\n")
	}
	fmt.Print(rep.String())
	if *md != "" {
		return writeSection(*md, "shapes", rep.String())
	}
	return nil
}

func fmtKB(n int64) string { return strconv.FormatFloat(float64(n)/1e3, 'f', 0, 64) + " KB" }

// shapeTargets evaluates the targets of issues 12 and 28 (CPU time unless
// said; the CPU ratio is the steady one on a shared machine).
func shapeTargets(rows []*row, spec shapesSpec, treeFiles int) *targets {
	t := newTargets(rows)
	fleet, tree, one := shapeFleet+"/", shapeTree+"/", shapeTreeOne+"/"
	t.rss("fleet/ verify --jobs 2", fleet+"verify--jobs2", 150)
	t.atLeast("fleet/ verify --jobs 1 faster than jq", fleet+"verify--jobs1", fleet+"jq", 3, false)
	t.atMost("fleet/ verify --jobs 1 / gjson-scan", fleet+"verify--jobs1", fleet+"gjson", 1.5, false)
	t.atMost("fleet/ space --jobs 2 / verify --jobs 2", fleet+"space", fleet+"verify--jobs2", 1.3, false)
	t.rss("fleet/ space --jobs 2", fleet+"space", 150)
	t.atMost("fleet/ reclaim dry run / verify --jobs 1", fleet+"reclaim", fleet+"verify--jobs1", 1.3, false)
	t.atMost("tree/ verify --jobs 1 / tree.jsonl verify (the same bytes in one file)", tree+"verify--jobs1", one+"verify", 1.3, false)
	if t.have(tree+"verify--jobs1", one+"verify", tree+"gjson", one+"gjson") {
		per := func(a, b string) float64 {
			return (spreadOf(t.by[a].cpus()).med - spreadOf(t.by[b].cpus()).med) / float64(treeFiles) * 1e6
		}
		fl, _ := pairedRatio(t.by[tree+"gjson"], t.by[one+"gjson"], false)
		t.lines = append(t.lines, fmt.Sprintf("per file (tree/ against tree.jsonl, median CPU): verify %.0f us, gjson-scan %.0f us (its tree/tree.jsonl ratio %s)",
			per(tree+"verify--jobs1", one+"verify"), per(tree+"gjson", one+"gjson"), fl.format(2, "x")))
	}
	t.atMost("small-lines verify / gjson-scan", shapeSmall+"/verify", shapeSmall+"/gjson", 1.5, false)
	t.atMost("small-records verify / gjson-scan", shapeRecords+"/verify", shapeRecords+"/gjson", 1.5, false)
	t.atMost("small-records verify / jq -c .type", shapeRecords+"/verify", shapeRecords+"/jq", 0.35, false)
	t.atMost("small-records verify / python3 json loop", shapeRecords+"/verify", shapeRecords+"/python", 0.3, false)
	t.atMost("worldstate verify / worldstate-events verify", shapeWorld+"/verify", shapeWorldEvents+"/verify", 2, false)
	t.rss("ids.jsonl verify", shapeIDs+"/verify", 250)
	t.atMost("fixes.jsonl repair dry run / verify", shapeFixes+"/repair", shapeFixes+"/verify", 2.2, false)
	t.atMost("fixes.jsonl repair --write / verify", shapeFixes+"/repair-write", shapeFixes+"/verify", 2.5, false)
	t.rss("fixes.jsonl repair dry run", shapeFixes+"/repair", 400)
	// Flat in the number of fixes: the same items, ten times the fixes.
	if t.have(shapeFixes+"/repair", shapeFewFixes+"/repair") {
		d := float64(t.by[shapeFixes+"/repair"].rssKiB()-t.by[shapeFewFixes+"/repair"].rssKiB()) / 1024
		per := d * (1 << 20) / float64(spec.MissingIDs-spec.FewFixes)
		t.verdict(fmt.Sprintf("repair dry run peak RSS, fixes.jsonl - fixes-few.jsonl (%d more fixes) <= 16 MiB", spec.MissingIDs-spec.FewFixes),
			fmt.Sprintf("%.1f MiB (%.0f bytes per fix)", d, per), d <= 16)
	}
	// A line costs about its size once (issue 11): verify holds the line,
	// repair the line and its edited copy; 40 MiB is the small-file
	// baseline and its slack.
	if r := t.by[shapeLong+"/verify"]; r != nil {
		line := float64(r.bytes) / (1 << 20)
		t.rss("longline.jsonl verify", shapeLong+"/verify", math.Round(1.5*line+40))
		t.rss("longline.jsonl repair dry run", shapeLong+"/repair", math.Round(2.5*line+40))
	}
	return t
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
