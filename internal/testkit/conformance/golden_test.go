package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/checks"
)

// goldenDirs lists root/VERSION/SCENARIO directories.
func goldenDirs(t *testing.T, root string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	sort.Strings(dirs)
	return dirs
}

func caseName(dir string) string {
	return filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
}

// TestGoldens compares the engine's live history (what `rollout state`
// prints) with the history Codex rebuilt on resume, for every committed
// golden. A difference must be listed in KnownDifferences; a listed one
// that no longer occurs fails too, so the list stays true.
func TestGoldens(t *testing.T) {
	seen := checkGoldens(t, "testdata")
	for name := range KnownDifferences {
		if !strings.Contains(name, "/corrupt/") && !seen[name] {
			t.Errorf("KnownDifferences lists %s, which has no golden", name)
		}
	}
}

func checkGoldens(t *testing.T, root string) map[string]bool {
	dirs := goldenDirs(t, root)
	if len(dirs) == 0 {
		t.Fatalf("no goldens under %s", root)
	}
	seen := map[string]bool{}
	var table []string
	for _, dir := range dirs {
		name := caseName(dir)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			g, err := ReadGolden(dir)
			if err != nil {
				t.Fatal(err)
			}
			if g.Oracle.ExitCode != 0 {
				t.Fatalf("Codex %s did not resume its own %s session (exit %d): %s", g.Provenance.Version, g.Provenance.Scenario.Name, g.Oracle.ExitCode, g.Oracle.Stderr)
			}
			diff, err := Compare(filepath.Join(dir, "session", g.Judged), g.Provenance.Version, g.Oracle)
			if err != nil {
				t.Fatal(err)
			}
			known, listed := KnownDifferences[name]
			verdict := "agrees"
			if diff != "" {
				verdict = "differs (listed)"
			}
			table = append(table, fmt.Sprintf("| %s | %s | %d | %s |", g.Provenance.Version, g.Provenance.Scenario.Name, len(g.Oracle.Rebuilt), verdict))
			switch {
			case diff != "" && !listed:
				t.Errorf("rollout state differs from what Codex %s rebuilt:\n%s", g.Provenance.Version, diff)
			case diff == "" && listed:
				t.Errorf("listed difference no longer occurs (remove it from KnownDifferences and docs): %s", known.Why)
			}
		})
	}
	if testing.Verbose() {
		t.Log("| version | scenario | Codex items | |\n" + strings.Join(table, "\n"))
	}
	return seen
}

// TestKnownDifferencesDocumented: every listed difference is in
// docs/codex-replay.md, under its case name.
func TestKnownDifferencesDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "codex-replay.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range KnownDifferences {
		if !strings.Contains(string(b), "`"+name+"`") {
			t.Errorf("docs/codex-replay.md does not list the known difference `%s`", name)
		}
	}
}

// TestGoldenProvenance: every golden says what made it, and its rollouts
// are Codex's (the version it names wrote them).
func TestGoldenProvenance(t *testing.T) {
	for _, dir := range goldenDirs(t, "testdata") {
		g, err := ReadGolden(dir)
		if err != nil {
			t.Fatal(err)
		}
		name := caseName(dir)
		if g.Provenance.Version != filepath.Base(filepath.Dir(dir)) || g.Provenance.Scenario.Name != filepath.Base(dir) ||
			g.Provenance.Generated == "" || len(g.Provenance.Scenario.Steps) == 0 {
			t.Errorf("%s: incomplete provenance %+v", name, g.Provenance)
		}
		if _, err := os.Stat(filepath.Join(dir, "session", g.Judged)); err != nil {
			t.Errorf("%s: judged rollout: %v", name, err)
		}
	}
}

// TestRollbackCompactedVerdict holds rollback/compacted-turn to what Codex
// sent after a rollback of a turn that compacted (the rollback-compacted
// goldens): when Codex lost the kept turn and replayed the rolled-back
// one's items after its compaction, the rule is an error; when the kept
// turn's prompt survived but the rolled-back prompt came back, a warning.
func TestRollbackCompactedVerdict(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*", "rollback-compacted"))
	if len(dirs) == 0 {
		t.Fatal("no rollback-compacted golden")
	}
	for _, dir := range dirs {
		t.Run(caseName(dir), func(t *testing.T) {
			g, err := ReadGolden(dir)
			if err != nil {
				t.Fatal(err)
			}
			// The scripted prompts of the scenario's steps: the kept
			// turn's, then the rolled-back turn's.
			kept, dropped := g.Provenance.Scenario.Steps[0].Prompt, g.Provenance.Scenario.Steps[1].Prompt
			has := func(text string) bool {
				for _, it := range g.Oracle.Rebuilt {
					if it.Type == "message" && it.Role == "user" && it.Text == text {
						return true
					}
				}
				return false
			}
			var want string
			switch {
			case !has(kept) && !has(dropped) && len(g.Oracle.Rebuilt) > 0:
				want = "error" // the rolled-back turn's tail, nothing before
			case has(kept) && has(dropped):
				want = "warning" // the rollback cut the summary, not the turn
			default:
				t.Fatalf("Codex %s rebuilt neither shape the rule describes: %v", g.Provenance.Version, g.Oracle.Rebuilt)
			}
			res, err := checks.Run(filepath.Join(dir, "session", g.Judged), nil, checks.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				if f.Rule == "rollback/compacted-turn" {
					got = append(got, f.Severity.String())
				}
			}
			if len(got) != 1 || got[0] != want {
				t.Errorf("Codex %s rebuilt %d items (kept prompt %v, rolled-back prompt %v): rollback/compacted-turn %v, want one %s",
					g.Provenance.Version, len(g.Oracle.Rebuilt), has(kept), has(dropped), got, want)
			}
		})
	}
}
