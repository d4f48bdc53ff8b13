package checks_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/rollout"
)

// TestRuleFixtures runs every fixtures/rules/*.txtar and compares the full
// (line, rule, severity) list, so a spurious finding fails as surely as a
// missing one.
func TestRuleFixtures(t *testing.T) {
	fixtures, err := loadRuleFixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range fx.cases {
				target := slices.ContainsFunc(c.want, func(w wantFinding) bool { return w.Rule == fx.rule })
				switch {
				case c.section == "rollout.jsonl" && !target:
					t.Errorf("%s: want does not list %s, the rule the fixture is named after", fx.source, fx.rule)
				case c.section == "clean.jsonl" && target:
					t.Errorf("%s: clean.want lists %s: the near miss must not trigger it", fx.source, fx.rule)
				}
				res, err := fx.run(t, c)
				if err != nil {
					t.Fatalf("%s: %v", c.section, err)
				}
				got := gotFindings(res.Findings)
				if diff := cmp.Diff(lines(c.want), lines(got), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s %s: findings (LINE RULE SEVERITY) differ (-want +got):\n%s", fx.source, c.section, diff)
				}
				checkPositions(t, c, res.Findings)
			}
		})
	}
}

// checkPositions checks what the want list leaves out: each finding's byte
// offset is the start of its line and its fixable flag matches the registry.
func checkPositions(t *testing.T, c fixtureCase, fs []checks.Finding) {
	t.Helper()
	starts := []int64{0}
	for i, b := range c.data {
		if b == '\n' && i+1 < len(c.data) {
			starts = append(starts, int64(i+1))
		}
	}
	for _, f := range fs {
		if f.Line < 1 || f.Line > len(starts) {
			t.Errorf("%s: %s on line %d, but the file has %d lines", c.section, f.Rule, f.Line, len(starts))
			continue
		}
		if f.ByteOffset != starts[f.Line-1] {
			t.Errorf("%s: %s on line %d has byte offset %d, want %d", c.section, f.Rule, f.Line, f.ByteOffset, starts[f.Line-1])
		}
		r, _ := checks.Lookup(f.Rule)
		if f.Fixable != r.Fixable() {
			t.Errorf("%s: %s fixable = %v, registry says %v", c.section, f.Rule, f.Fixable, r.Fixable())
		}
		if f.Message == "" {
			t.Errorf("%s: %s on line %d has no message", c.section, f.Rule, f.Line)
		}
	}
}

var ruleIDRE = regexp.MustCompile(`^[a-z]+/[a-z0-9]+(-[a-z0-9]+)*$`)

// TestRegistry checks every rule is a complete, documented value with a
// fixture that triggers it.
func TestRegistry(t *testing.T) {
	fixtures, err := loadRuleFixtures()
	if err != nil {
		t.Fatal(err)
	}
	triggered := map[string]bool{} // by the fixture named after the rule
	for _, fx := range fixtures {
		if _, ok := checks.Lookup(fx.rule); !ok {
			t.Errorf("%s: fixture named after unregistered rule %s", fx.source, fx.rule)
		}
		for _, c := range fx.cases {
			if c.section != "rollout.jsonl" {
				continue
			}
			for _, w := range c.want {
				if w.Rule == fx.rule {
					triggered[w.Rule] = true
				}
			}
		}
	}
	// The home/ rules are triggered by the home fixtures (run by the home
	// package, which builds each home's databases).
	homeFixtures, _ := filepath.Glob("../fixtures/home/*.txtar")
	for _, p := range homeFixtures {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		for _, f := range ar.Files {
			if f.Name != "want" {
				continue
			}
			for _, l := range strings.Split(string(f.Data), "\n") {
				if fs := strings.Fields(l); len(fs) >= 3 && fs[2] == "home/"+strings.SplitN(name, ".", 2)[0] {
					triggered[fs[2]] = true
				}
			}
		}
	}
	rules := checks.Rules()
	if len(rules) == 0 {
		t.Fatal("empty registry")
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if !ruleIDRE.MatchString(r.ID) {
			t.Errorf("rule id %q is not area/name", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("rule %s registered twice", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Doc == "" || r.Since == "" {
			t.Errorf("%s: title, doc and since are required (title %q, doc %q, since %q)", r.ID, r.Title, r.Doc, r.Since)
		}
		if r.Severity != checks.Error && r.Severity != checks.Warning && r.Severity != checks.Info {
			t.Errorf("%s: severity %v", r.ID, r.Severity)
		}
		if r.OptIn && r.Fix == "" {
			t.Errorf("%s: opt-in fix without Fix text", r.ID)
		}
		if !triggered[r.ID] {
			if r.Area() == "home" {
				t.Errorf("%s: no home fixture triggers it (add ../fixtures/home/%s.txtar)", r.ID, strings.TrimPrefix(r.ID, "home/"))
			} else {
				t.Errorf("%s: no fixture triggers it (add %s/%s.txtar)", r.ID, rulesDir, fixtureName(r.ID))
			}
		}
	}
}

func fixtureName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c == '/' {
			b[i] = '-'
			break
		}
	}
	return string(b)
}

// TestCleanFixtures: the clean fixture of each era produces no finding of
// any severity, and really is the era it claims to be.
func TestCleanFixtures(t *testing.T) {
	tests := []struct {
		file      string
		era       rollout.Era
		mode      string
		usesIDs   bool
		check     func(t *testing.T, res *checks.Result)
		minRecord int
	}{
		{file: "bare-2025.jsonl", era: rollout.EraBare, mode: rollout.HistoryLegacy, minRecord: 8},
		{file: "envelope-legacy.jsonl", era: rollout.EraEnvelope, mode: rollout.HistoryLegacy, usesIDs: true, minRecord: 20,
			check: func(t *testing.T, res *checks.Result) {
				if res.State.Lineage.WindowNumber != 1 || res.State.Lineage.FirstWindowID == "" {
					t.Errorf("lineage = %+v, want one compaction with a first window id", res.State.Lineage)
				}
				if res.State.Tokens == nil {
					t.Error("no token usage restored")
				}
			}},
		{file: "envelope-paginated.jsonl", era: rollout.EraEnvelope, mode: rollout.HistoryPaginated, usesIDs: true, minRecord: 20,
			check: func(t *testing.T, res *checks.Result) {
				rolledBack := false
				for _, turn := range res.State.Turns {
					rolledBack = rolledBack || turn.RolledBack
				}
				if !rolledBack {
					t.Error("no rolled-back turn")
				}
				if res.State.WorldState == nil {
					t.Error("no world state baseline")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			res, err := checks.Run(filepath.Join("../fixtures/clean", tt.file), nil, checks.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				t.Errorf("line %d: %s %s: %s", f.Line, f.Severity, f.Rule, f.Message)
			}
			st := res.State
			if st.Era != tt.era || st.HistoryMode != tt.mode || st.UsesItemIDs != tt.usesIDs {
				t.Errorf("era %s, history mode %s, uses ids %v; want %s, %s, %v", st.Era, st.HistoryMode, st.UsesItemIDs, tt.era, tt.mode, tt.usesIDs)
			}
			if res.Records < tt.minRecord {
				t.Errorf("%d records, want at least %d", res.Records, tt.minRecord)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}
