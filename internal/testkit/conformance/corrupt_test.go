package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/checks"
)

func readCorrupt(t *testing.T, path string) *CorruptGolden {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g CorruptGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &g
}

// Verdict is how rollout judges one damaged file against what Codex did.
type Verdict struct {
	Codex    string // what Codex did: "refused", "glued", "resumed"
	Worst    string // verify's worst severity ("none")
	Rules    []string
	Agrees   bool   // state's history equals Codex's rebuilt (when it resumed)
	Repaired string // "resumes", "refused", "nothing to fix"
	Problems []string
}

func worst(fs []checks.Finding) string {
	w := "none"
	rank := map[string]int{"none": 0, "info": 1, "warning": 2, "error": 3}
	for _, f := range fs {
		if s := f.Severity.String(); rank[s] > rank[w] {
			w = s
		}
	}
	return w
}

// judge damages the base golden, runs verify and state on the result and
// compares with what Codex did; the repaired file too.
func judge(t *testing.T, root string, g *CorruptGolden) Verdict {
	t.Helper()
	var c Corruption
	for _, x := range Corruptions {
		if x.Name == g.Name {
			c = x
		}
	}
	if c.Apply == nil {
		t.Fatalf("unknown corruption %q", g.Name)
	}
	rel, damaged, _, _, err := Damage(root, g.Version, c)
	if err != nil {
		t.Fatal(err)
	}
	if sha(damaged) != g.SHA256 {
		t.Fatalf("%s/%s: the damaged file is not the one Codex resumed (base golden changed?): regenerate", g.Version, g.Name)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.Base(rel))
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	v := Verdict{Codex: "resumed"}
	switch {
	case g.Oracle.ExitCode != 0:
		v.Codex = "refused"
	case g.Oracle.GluedToTail:
		v.Codex = "glued"
	}
	res, err := checks.Run(path, nil, checks.Options{Now: repairClock})
	if err != nil {
		t.Fatal(err)
	}
	v.Worst = worst(res.Findings)
	for _, f := range res.Findings {
		v.Rules = append(v.Rules, f.Severity.String()+" "+f.Rule)
	}
	if v.Codex != "resumed" && v.Worst != "error" {
		v.Problems = append(v.Problems, fmt.Sprintf("Codex %s the file but verify's worst is %s", v.Codex, v.Worst))
	}
	if v.Codex != "refused" {
		d, err := Compare(path, g.Version, g.Oracle)
		if err != nil {
			t.Fatal(err)
		}
		if d != "" {
			v.Problems = append(v.Problems, "state differs from Codex's rebuilt history:\n"+d)
		} else {
			v.Agrees = true
		}
	}
	fixed, err := Repair(damaged, rel, filepath.Join(dir, "repair"), FixesOf(g.Name)...)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case fixed == nil && g.Repaired == nil:
		v.Repaired = "nothing to fix"
		if v.Codex != "resumed" && fixableError(res.Findings) {
			v.Problems = append(v.Problems, "repair finds nothing to fix while Codex "+v.Codex+" the file")
		}
		if v.Codex != "resumed" && !fixableError(res.Findings) {
			// Damage no fix can undo (a lost session_meta): verify's
			// error, not fixable, is the verdict.
			v.Repaired = "unrepairable"
		}
	case fixed == nil || g.Repaired == nil || sha(fixed) != g.RepairSHA256:
		v.Problems = append(v.Problems, "repair's result is not the one Codex resumed: regenerate")
	case g.Repaired.ExitCode != 0:
		v.Repaired = "refused"
		v.Problems = append(v.Problems, "Codex refused the repaired file: "+g.Repaired.Stderr)
	default:
		v.Repaired = "resumes"
		p := filepath.Join(dir, "repaired", filepath.Base(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, fixed, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Compare(p, g.Version, g.Repaired)
		if err != nil {
			t.Fatal(err)
		}
		if d != "" {
			v.Problems = append(v.Problems, "after repair, state differs from Codex's rebuilt history:\n"+d)
		}
		if g.Repaired.GluedToTail {
			v.Problems = append(v.Problems, "Codex glued its first record onto the repaired file's tail")
		}
	}
	return v
}

// fixableError: some error finding has a fix.
func fixableError(fs []checks.Finding) bool {
	for _, f := range fs {
		if f.Severity == checks.Error && f.Fixable {
			return true
		}
	}
	return false
}

// TestCorruptions judges verify, state and repair against what each Codex
// version did with each damaged rollout. A disagreement must be listed in
// KnownCorruptionDifferences (and docs/codex-replay.md); a listed one that
// has gone fails too.
func TestCorruptions(t *testing.T) {
	seen := checkCorruptions(t, "testdata")
	for name := range KnownDifferences {
		if strings.Contains(name, "/corrupt/") && !seen[name] {
			t.Errorf("KnownDifferences lists %s, which has no golden", name)
		}
	}
}

func checkCorruptions(t *testing.T, root string) map[string]bool {
	paths, _ := filepath.Glob(filepath.Join(root, "*", "corrupt", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no corruption goldens")
	}
	sort.Strings(paths)
	seen := map[string]bool{}
	var table []string
	for _, p := range paths {
		g := readCorrupt(t, p)
		name := g.Version + "/corrupt/" + g.Name
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			v := judge(t, root, g)
			table = append(table, fmt.Sprintf("| %s | %s | %s | %s | %v | %s |", g.Version, g.Name, v.Codex, v.Worst, v.Agrees, v.Repaired))
			known, listed := KnownDifferences[name]
			switch {
			case len(v.Problems) > 0 && !listed:
				t.Errorf("%s\nverify: %s", strings.Join(v.Problems, "\n"), strings.Join(v.Rules, ", "))
			case len(v.Problems) == 0 && listed:
				t.Errorf("listed difference no longer occurs (remove it from KnownDifferences and docs): %s", known.Why)
			}
		})
	}
	if testing.Verbose() {
		t.Log("| version | corruption | Codex | verify | state agrees | repair |\n" + strings.Join(table, "\n"))
	}
	return seen
}
