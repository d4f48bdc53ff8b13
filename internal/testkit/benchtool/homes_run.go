package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/rollout"
)

// The homes benchmark (issue 38 targets 2 and 5): rollout's commands on
// each home of `benchtool homes-gen` against the floor (gjson-scan over the
// same files) and the peers that read a Codex home, peak memory as the
// home grows, and the cost of a start against jq's.

// tokscaleScript runs tokscale's Rust core (@tokscale/core, which its CLI
// calls) over one Codex home: its CLI needs bun, the core only node.
const tokscaleScript = `// written by benchtool homes: tokscale's core over $CODEX_HOME
const core = require('@tokscale/core');
const r = core.parseLocalSources({ homeDir: '/nonexistent', sources: ['codex'] });
console.log(r.codexCount, r.messages.length);
`

// startRounds is how many starts one start-up measurement makes.
const startRounds = 20

func cmdHomes(args []string) error {
	fs := flag.NewFlagSet("homes", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to measure (required)")
	dir := fs.String("dir", "", "directory written by `benchtool homes-gen` (required)")
	md := fs.String("md", "", "also write the report into this Markdown file (its section `homes`)")
	reps := fs.Int("reps", 3, "rounds on homes of up to -big rollouts")
	big := fs.Int("big", 10000, "homes of more rollouts are measured once (their memory; the time of the smaller ones says the ratios)")
	peers := fs.String("peers", defaultPeers(), "npm prefix where tokscale and ccusage are installed (npm install --prefix DIR tokscale ccusage); absent: their rows are skipped")
	timeout := fs.Duration("timeout", 15*time.Minute, "limit per command run")
	only := fs.String("rollouts", "", "measure only the homes of these rollout counts (comma-separated; default all)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *bin == "" || *dir == "" || fs.NArg() > 0 || *reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool homes -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-big 10000] [-peers DIR]")
		return exitError(2)
	}
	if p, err := filepath.Abs(*bin); err == nil && strings.ContainsRune(*bin, os.PathSeparator) {
		*bin = p
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	homes, err := listHomes(*dir)
	if err != nil {
		return err
	}
	if *only != "" {
		counts, err := parseCounts(*only)
		if err != nil {
			return err
		}
		homes = slices.DeleteFunc(homes, func(h benchHome) bool { return !slices.Contains(counts, h.spec.Rollouts) })
	}
	if len(homes) == 0 {
		return fmt.Errorf("no home in %s (run `benchtool homes-gen -o %s` first)", filepath.Join(*dir, "homes"), *dir)
	}
	unlock, err := lockDir(*dir, false)
	if err != nil {
		return err
	}
	defer unlock()
	tok, ccusage, peerNote := findPeers(*peers)

	var rep strings.Builder
	fmt.Fprintf(&rep, "```sh\n%s\n```\n\n", commandLine())
	fmt.Fprintf(&rep, "- date: %s; %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), rolloutVersion(*bin))
	fmt.Fprintf(&rep, "- homes of `benchtool homes-gen`: rollouts cut from the files real Codex CLIs (0.40-0.171) wrote for the conformance scenarios, forks, sub-agents and reverts among them, single-file sessions grown to log-normal sizes by repeating their turns; a state database with a threads row per thread\n")
	fmt.Fprintf(&rep, "- peers: %s\n", peerNote)
	fmt.Fprintf(&rep, "- ratios are CPU time (user+sys), taken round by round, median (range)\n\n")

	allRows := map[string]*row{}
	for _, h := range homes {
		n := *reps
		if h.spec.Rollouts > *big {
			n = 1
		}
		rows := homeRows(h, tok, ccusage)
		var load loadLog
		fmt.Fprintf(os.Stderr, "benchtool homes: %s\n", h.dir)
		if err := cmdCatTo(os.DevNull, h.dir); err != nil { // page cache warm-up
			return err
		}
		runRounds(rows, n, *timeout, strings.NewReplacer("{rollout}", *bin, "{self}", self), &load)
		fmt.Fprintf(&rep, "### %d rollouts (%s, %d rounds; %s)\n\n", h.spec.Rollouts, fmtMB(h.bytes), n, load.String())
		rep.WriteString(rowTable(rows, n))
		t := homeTargets(rows, h.spec.Rollouts)
		rep.WriteString("\n")
		for _, l := range t.lines {
			rep.WriteString("- " + l + "\n")
		}
		rep.WriteString("\n")
		for _, r := range rows {
			allRows[r.key] = r
		}
	}

	rows := startRows()
	var load loadLog
	runRounds(rows, *reps, *timeout, strings.NewReplacer("{rollout}", *bin), &load)
	fmt.Fprintf(&rep, "### Start-up (%d starts a run, each through `sh -c`; %s)\n\n", startRounds, load.String())
	rep.WriteString(rowTable(rows, *reps))
	t := newTargets(rows)
	if t.have("start/rollout", "start/jq", "start/true") {
		// The loop's own cost (sh forking) is taken out of both sides.
		med := func(k string) float64 { return spreadOf(t.by[k].cpus()).med }
		loop := med("start/true")
		r, j := (med("start/rollout")-loop)/startRounds, (med("start/jq")-loop)/startRounds
		t.verdict("a start of rollout version / of jq -n 1 <= 2.5x (median CPU, the loop's own taken out)",
			fmt.Sprintf("%.1f ms / %.1f ms = %.2fx", r*1e3, j*1e3, r/j), r <= 2.5*j)
	}
	rep.WriteString("\n")
	for _, l := range t.lines {
		rep.WriteString("- " + l + "\n")
	}
	fmt.Print(rep.String())
	if *md != "" {
		return writeSection(*md, "homes", rep.String())
	}
	return nil
}

type benchHome struct {
	dir    string
	spec   homesSpec
	bytes  int64
	thread string // a thread id of the home, for find
}

func listHomes(dir string) ([]benchHome, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "homes", "home-*", homesStamp))
	if err != nil {
		return nil, err
	}
	var out []benchHome
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		h := benchHome{dir: filepath.Dir(p)}
		if err := json.Unmarshal(b, &h.spec); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if h.spec.Version != homesVersion {
			return nil, fmt.Errorf("%s was written by homes-gen version %d, this is %d: run homes-gen again", h.dir, h.spec.Version, homesVersion)
		}
		files, err := expandInputs([]string{h.dir})
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				h.bytes += fi.Size()
			}
		}
		// The thread of the middle file by name: find cannot stop early.
		if len(files) > 0 {
			h.thread, _ = rollout.ThreadIDFromName(files[len(files)/2])
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b benchHome) int { return a.spec.Rollouts - b.spec.Rollouts })
	return out, nil
}

func homeRows(h benchHome, tok, ccusage []string) []*row {
	in := fmt.Sprintf("%d rollouts", h.spec.Rollouts)
	k := fmt.Sprintf("%d/", h.spec.Rollouts)
	cmd := func(key, name string, args ...string) *row {
		return &row{key: k + key, input: in, name: "rollout " + name, maxExit: 1, bytes: h.bytes,
			argv: append([]string{"env", "CODEX_HOME=" + h.dir, "{rollout}"}, args...)}
	}
	rows := []*row{
		{key: k + "gjson", input: in, name: "benchtool gjson-scan", bytes: h.bytes, argv: []string{"{self}", "gjson-scan", h.dir}},
		{key: k + "jq", input: in, name: "jq -c .type", needs: "jq", bytes: h.bytes,
			argv: []string{"sh", "-c", `"$0" cat "$1" | jq -c .type >/dev/null`, "{self}", h.dir}},
		cmd("verify", "verify --jobs 1", "verify", "--jobs", "1", h.dir),
		cmd("home", "home", "home", h.dir),
		cmd("find", "find ID", "find", h.thread),
		cmd("space", "space --jobs 1", "space", "--jobs", "1", h.dir),
		cmd("budget", "simulate-budget --jobs 1", "simulate-budget", "--jobs", "1", h.dir), // as verify: one worker
		cmd("reclaim", "reclaim --policy superseded-checkpoints,duplicate-exec-output (dry run)", "reclaim", "--policy", "superseded-checkpoints,duplicate-exec-output", h.dir),
	}
	peer := func(key, name string, argv []string) *row {
		r := &row{key: k + key, input: in, name: name, bytes: h.bytes, argv: append([]string{"env", "CODEX_HOME=" + h.dir}, argv...)}
		if argv == nil {
			r.state, r.note = stSkipped, "skipped (not installed)"
		}
		return r
	}
	return append(rows, peer("tokscale", "tokscale core (node, @tokscale/core parseLocalSources codex)", tok),
		peer("ccusage", "ccusage codex daily --offline", ccusage))
}

func homeTargets(rows []*row, n int) *targets {
	t := newTargets(rows)
	k := fmt.Sprintf("%d/", n)
	if t.by[k+"verify"].ok() && len(t.by[k+"verify"].samples) > 1 {
		t.atMost("verify --jobs 1 / gjson-scan", k+"verify", k+"gjson", 1.5, false)
		t.atMost("home / verify", k+"home", k+"verify", 0.5, false)
		t.atMost("find ID / verify", k+"find", k+"verify", 0.1, false)
		t.atMost("space / verify", k+"space", k+"verify", 1.3, false)
		t.atMost("simulate-budget / verify", k+"budget", k+"verify", 1.0, false)
		t.atMost("reclaim dry run / verify", k+"reclaim", k+"verify", 1.0, false)
		if t.by[k+"tokscale"].ok() {
			t.atLeast("verify --jobs 1 cheaper than tokscale's core", k+"verify", k+"tokscale", 1.6, false)
		}
		if t.by[k+"ccusage"].ok() {
			t.atLeast("verify --jobs 1 cheaper than ccusage", k+"verify", k+"ccusage", 1.6, false)
		}
	}
	for _, r := range rows {
		if strings.HasPrefix(r.name, "rollout ") {
			t.rss(fmt.Sprintf("%d rollouts: %s", n, strings.TrimPrefix(r.name, "rollout ")), r.key, 150)
		}
	}
	return t
}

// startRows measure startRounds starts of `rollout version` and of jq.
func startRows() []*row {
	loop := func(cmd string) []string {
		return []string{"sh", "-c", fmt.Sprintf(`i=0; while [ $i -lt %d ]; do %s >/dev/null; i=$((i+1)); done`, startRounds, cmd), "{rollout}"}
	}
	return []*row{
		{key: "start/rollout", input: "-", name: fmt.Sprintf("rollout version x%d", startRounds), argv: loop(`"$0" version`)},
		{key: "start/jq", input: "-", name: fmt.Sprintf("jq -n 1 x%d", startRounds), needs: "jq", argv: loop("jq -n 1")},
		{key: "start/true", input: "-", name: fmt.Sprintf("/bin/true x%d (the loop itself)", startRounds), argv: loop("/bin/true")},
	}
}

// defaultPeers is where the peers are looked for: an npm prefix in the
// user's cache, outside the repository.
func defaultPeers() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "rollout", "peers")
}

// findPeers returns the argv of each peer installed under prefix (nil when
// absent or unable to run here) and a note saying which were found.
func findPeers(prefix string) (tok, ccusage []string, note string) {
	var notes []string
	node, err := exec.LookPath("node")
	if prefix == "" || err != nil {
		return nil, nil, "tokscale and ccusage skipped (no node, or no -peers directory)"
	}
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@tokscale", "core")); err == nil {
		script := filepath.Join(prefix, "tokscale-codex.js")
		if err := os.WriteFile(script, []byte(tokscaleScript), 0o644); err == nil {
			tok = []string{node, script}
			notes = append(notes, "tokscale "+npmVersion(prefix, "tokscale")+" (its Rust core, @tokscale/core, called from node: the CLI needs bun)")
		}
	} else {
		notes = append(notes, "tokscale skipped (not installed: npm install --prefix "+prefix+" tokscale)")
	}
	cc := filepath.Join(prefix, "node_modules", ".bin", "ccusage")
	if out, err := exec.Command(cc, "--version").CombinedOutput(); err == nil {
		ccusage = []string{cc, "codex", "daily", "--offline"}
		notes = append(notes, "ccusage "+strings.TrimSpace(string(out)))
	} else {
		why := "not installed: npm install --prefix " + prefix + " ccusage"
		if len(out) > 0 {
			why = oneLine(strings.TrimSpace(string(out)), 120)
		}
		notes = append(notes, "ccusage skipped ("+why+")")
	}
	return tok, ccusage, strings.Join(notes, "; ")
}

func npmVersion(prefix, pkg string) string {
	b, err := os.ReadFile(filepath.Join(prefix, "node_modules", pkg, "package.json"))
	if err != nil {
		return "?"
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p) != nil {
		return "?"
	}
	return p.Version
}
