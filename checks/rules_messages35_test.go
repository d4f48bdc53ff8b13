package checks_test

import (
	"strings"
	"testing"
)

// Messages that tell what Codex does (issue 35): each fixture's finding of
// its rule says the consequence, and a near case does not borrow it.
func TestMessagesSayWhatCodexDoes(t *testing.T) {
	fixtures, err := loadRuleFixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fixture, rule, want, not string
	}{
		{"lineage-cycle.lost-suffix", "lineage/cycle", "restore the name", ""},
		{"lineage-cycle", "lineage/cycle", "cycle detected", "restore the name"},
		{"line-invalid-json.compacted", "line/invalid-json", "resumes uncompacted", ""},
		{"line-invalid-json", "line/invalid-json", "resumes the rest unchanged", "uncompacted"},
		{"line-bom", "line/bom", "byte order mark", "torn"},
		{"line-invalid-utf8", "line/invalid-utf8", "silently drops this record", ""},
		{"worldstate-patch-without-baseline", "worldstate/patch-without-baseline", "writes a new snapshot", ""},
		{"ordinal-duplicate.copy", "ordinal/duplicate", "repeats line 4's record", ""},
		{"ordinal-duplicate", "ordinal/duplicate", "used twice", "repeats"},
	} {
		var found bool
		for _, fx := range fixtures {
			if fx.name != c.fixture {
				continue
			}
			found = true
			res, err := fx.run(t, fx.cases[0])
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, f := range res.Findings {
				if f.Rule == c.rule {
					msgs = append(msgs, f.Message)
				}
			}
			all := strings.Join(msgs, "\n")
			if len(msgs) == 0 || !strings.Contains(all, c.want) || (c.not != "" && strings.Contains(all, c.not)) {
				t.Errorf("%s: %s says %q; want it to say %q (and not %q)", c.fixture, c.rule, all, c.want, c.not)
			}
		}
		if !found {
			t.Errorf("no fixture %s", c.fixture)
		}
	}
}
