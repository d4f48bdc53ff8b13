package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

// cmdChains measures how verify scales with the depth of a fork chain
// (issue 38, target 4): a home holding one chain of forks, each continuing
// the whole of its parent and adding two turns, for each depth; the deepest
// against the shallowest in the same rounds. Without a memo of the
// replayed prefixes the cost grows with the square of the depth.
func cmdChains(args []string) error {
	fs := flag.NewFlagSet("chains", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to measure (required)")
	dir := fs.String("dir", "", "directory for the generated homes, DIR/chains/N (required)")
	md := fs.String("md", "", "also write the report into this Markdown file (its section `chains`)")
	reps := fs.Int("reps", 5, "rounds: each command runs once per round")
	depthList := fs.String("depths", "50,200", "chain depths, the shallowest first; the last is judged against the first")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit per command run")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	var depths []int
	for _, s := range strings.Split(*depthList, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("-depths: %q is not a depth", s)
		}
		depths = append(depths, n)
	}
	if *bin == "" || *dir == "" || fs.NArg() > 0 || *reps < 1 || len(depths) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchtool chains -rollout BINARY -dir DIR [-md FILE] [-reps 5] [-depths 50,200]")
		return exitError(2)
	}
	if p, err := filepath.Abs(*bin); err == nil && strings.ContainsRune(*bin, os.PathSeparator) {
		*bin = p
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockDir(*dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	var rows []*row
	for _, n := range depths {
		home := filepath.Join(*dir, "chains", strconv.Itoa(n))
		if _, err := os.Stat(filepath.Join(home, "sessions")); err != nil {
			if _, err := lineagegen.Write(home, chainTree(n)); err != nil {
				return err
			}
		}
		rows = append(rows, &row{key: strconv.Itoa(n), input: fmt.Sprintf("chain of %d", n), name: "rollout verify --jobs 1",
			maxExit: 1, argv: []string{"{rollout}", "verify", "--jobs", "1", home}})
	}
	var load loadLog
	start := time.Now()
	runRounds(rows, *reps, *timeout, strings.NewReplacer("{rollout}", *bin), &load)

	var rep strings.Builder
	fmt.Fprintf(&rep, "```sh\n%s\n```\n\n", commandLine())
	fmt.Fprintf(&rep, "- date: %s; %s\n", start.UTC().Format("2006-01-02 15:04 UTC"), load.String())
	fmt.Fprintf(&rep, "- %d rounds; ratios are taken round by round (paired runs) and given as median (range)\n", *reps)
	rep.WriteString("- a chain of N: a Codex home holding a root and N-1 forks, each continuing the whole of the one before and adding two turns (`lineagegen`)\n\n")
	rep.WriteString(rowTable(rows, *reps))
	t := newTargets(rows)
	lo, hi := depths[0], depths[len(depths)-1]
	t.atMost(fmt.Sprintf("chain of %d / chain of %d (%gx the rollouts)", hi, lo, float64(hi)/float64(lo)), strconv.Itoa(hi), strconv.Itoa(lo),
		1.25*float64(hi)/float64(lo), false)
	rep.WriteString("\n")
	for _, l := range t.lines {
		rep.WriteString(l + "\n")
	}
	fmt.Print(rep.String())
	if *md != "" {
		return writeSection(*md, "chains", rep.String())
	}
	return nil
}

// chainTree is a root and n-1 forks, each of the one before, cut at its end.
func chainTree(n int) lineagegen.Tree {
	t := lineagegen.Tree{{Name: "n0", Kind: "root", Turns: 2}}
	for i := 1; i < n; i++ {
		t = append(t, lineagegen.Node{Name: fmt.Sprintf("n%d", i), Kind: "fork", Parent: fmt.Sprintf("n%d", i-1), Cut: -1, Turns: 2})
	}
	return t
}
