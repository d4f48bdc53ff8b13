package reclaim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// A zstd rollout is planned as compressed, whether or not its name says
// so, with the splice policies skipped, before-turn's replay included; the
// plain file it was made from is not.
func TestPlanCompressedInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	packed := enc.EncodeAll(plain, nil)
	other := t.TempDir()
	named := filepath.Join(other, filepath.Base(paths[0])+".zst")
	unnamed := filepath.Join(other, "rollout-magic-only.jsonl")
	for _, p := range []string{named, unnamed} {
		if err := os.WriteFile(p, packed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, policies := range [][]string{
		{space.PolicyDuplicateExecOutput},
		{space.PolicyDuplicateExecOutput, space.PolicyBeforeTurn},
	} {
		for _, c := range []struct {
			path       string
			compressed bool
		}{{paths[0], false}, {named, true}, {unnamed, true}} {
			plan, _, err := reclaim.PlanFile(c.path, opts(policies...))
			if err != nil {
				t.Fatalf("%s %v: %v", filepath.Base(c.path), policies, err)
			}
			if plan.Compressed != c.compressed {
				t.Errorf("%s %v: Compressed = %v, want %v", filepath.Base(c.path), policies, plan.Compressed, c.compressed)
			}
			skipped := strings.Contains(plan.Skipped[space.PolicyDuplicateExecOutput], "plain .jsonl")
			if skipped != c.compressed || (c.compressed && len(plan.Cuts) > 0) {
				t.Errorf("%s %v: cuts %d, skipped %q", filepath.Base(c.path), policies, len(plan.Cuts), plan.Skipped[space.PolicyDuplicateExecOutput])
			}
		}
	}
}
