package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The committed docs name no machine's paths, no spec files the repository
// does not hold, and no work promised to "a later issue".
func TestDocsArePortable(t *testing.T) {
	t.Parallel()
	docs, _ := filepath.Glob("../../docs/*.md")
	more, _ := filepath.Glob("../../fixtures/*/README.md")
	docs = append(append(docs, "../../README.md"), more...)
	if len(docs) < 3 {
		t.Fatalf("found only %v", docs)
	}
	bad := regexp.MustCompile(`(/work/|/root/|/home/[a-z]|/Users/|[A-Z]:\\Users)[^ ]*|shared spec|the \w+ spec\b|a later issue`)
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bad.FindAll(b, -1) {
			t.Errorf("%s: %q", p, m)
		}
	}
}

// TestReadmeStateSessions runs the README's `rollout state` sessions (a
// "$ rollout state ..." line, optionally "| head -N", then its output)
// from the repository root and compares what they print.
func TestReadmeStateSessions(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := filepath.Glob("../../fixtures/demo/rollout-*.jsonl")
	if err != nil || len(demo) != 1 {
		t.Fatalf("the demo rollout: %v %v", demo, err)
	}
	t.Chdir("../..")
	sessions := 0
	for _, block := range fencedBlocks(string(b)) {
		lines := strings.Split(strings.TrimSuffix(block.text, "\n"), "\n")
		for i, line := range lines {
			cmd, ok := strings.CutPrefix(line, "$ rollout state ")
			if !ok {
				continue
			}
			sessions++
			cmd, head, piped := strings.Cut(cmd, " | head -")
			var want []string
			for _, l := range lines[i+1:] {
				if strings.HasPrefix(l, "$ ") {
					break
				}
				want = append(want, l)
			}
			args := append([]string{"state"}, strings.Fields(strings.ReplaceAll(cmd, "$F", "fixtures/demo/"+filepath.Base(demo[0])))...)
			io, stdout, stderr := testIO("")
			if code := run(args, io); code != exitOK {
				t.Errorf("README: rollout %v: exit %d\n%s", args, code, stderr)
				continue
			}
			got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if n, err := strconv.Atoi(head); piped && err == nil && n < len(got) {
				got = got[:n]
			}
			if !slices.Equal(got, want) {
				t.Errorf("README: rollout %v prints\n%s\nbut the README shows\n%s", args, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if sessions < 2 {
		t.Errorf("found %d `rollout state` sessions in the README, want at least 2", sessions)
	}
}

// The first run's cost is said where a new user meets it, and CI compiles
// before the tests run, so that no test's own build (TestCIRecipesBuild,
// the image test) spends its package's time limit on a cold cache.
func TestFirstRunCost(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	try := string(readme)[strings.Index(string(readme), "## Try it"):]
	try = try[:strings.Index(try, "\n## A tour")]
	if !regexp.MustCompile(`(?s)first run.*\d+-\d+ CPU\s+seconds.*modernc\.org/sqlite`).MatchString(try) {
		t.Error("README.md's Try it does not say what the first run costs (CPU seconds, and why)")
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	script := string(ci)
	test := strings.Index(script, "\nmake test\n")
	for _, build := range []string{"\ngo build -o /dev/null ./cmd/rollout\n", "\nGOFLAGS=-trimpath GOTOOLCHAIN=local go build", "\nCGO_ENABLED=0 GOOS=linux go build -trimpath"} {
		if i := strings.Index(script, build); i < 0 || test < 0 || i > test {
			t.Errorf(".ci/run does not compile %q before make test", strings.TrimSpace(build))
		}
	}
}
