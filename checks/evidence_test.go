package checks_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

var updateEvidence = flag.Bool("update-evidence", false, "rewrite testdata/evidence.txt from the current output (only to record an added field)")

const evidenceGolden = "testdata/evidence.txt"

// TestEvidenceSchema pins the public "evidence" object of every rule: the
// keys each rule's findings carry over all fixtures, with their JSON type.
// The JSON report is additive: a key may be added (run with
// -update-evidence and review the diff), never renamed, removed or given
// another type. Every rule with a triggering fixture appears.
func TestEvidenceSchema(t *testing.T) {
	fixtures, err := loadRuleFixtures()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]map[string]bool{} // rule -> "key type"
	for _, fx := range fixtures {
		for _, c := range fx.cases {
			res, err := fx.run(t, c)
			if err != nil {
				t.Fatalf("%s %s: %v", fx.source, c.section, err)
			}
			for _, f := range res.Findings {
				if keys[f.Rule] == nil {
					keys[f.Rule] = map[string]bool{}
				}
				for _, kt := range evidenceKeys(t, f) {
					keys[f.Rule][kt] = true
				}
			}
		}
	}
	got := filetest.KeyLines(keys)
	if *updateEvidence {
		if err := os.WriteFile(evidenceGolden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(evidenceGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the evidence keys changed (-%s +got): renaming or removing a key breaks the JSON schema; "+
			"an added key is recorded with -update-evidence:\n%s", filepath.Base(evidenceGolden), diff)
	}
	for _, r := range checks.Rules() {
		if r.Area() == "home" {
			continue // pinned by the home fixtures (internal/codex/home/testdata/evidence.txt)
		}
		if !slices.ContainsFunc(got, func(s string) bool { return s == r.ID+":" || strings.HasPrefix(s, r.ID+": ") }) {
			t.Errorf("%s: no fixture finding, so its evidence is not pinned", r.ID)
		}
	}
}

// evidenceKeys is the "key type" list of a finding's evidence as the JSON
// report writes it.
func evidenceKeys(t *testing.T, f checks.Finding) []string {
	t.Helper()
	b, err := json.Marshal(f.EvidenceMap())
	if err != nil {
		t.Fatalf("%s: %v", f.Rule, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: evidence %s is not an object: %v", f.Rule, b, err)
	}
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s %s", k, jsonType(v)))
	}
	return out
}

func jsonType(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "number"
}
