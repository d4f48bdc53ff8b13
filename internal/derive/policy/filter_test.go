package policy

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
)

func TestRuleFilter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := &config.Config{Dir: dir, PerPathIgnores: map[string][]string{"archived/**": {"compaction/"}}}
	ignoreItem, err := checks.NewFilter(nil, []string{"item/"})
	if err != nil {
		t.Fatal(err)
	}
	fs := func() []checks.Finding {
		return []checks.Finding{finding("item/missing-id", 1, checks.Error), finding("compaction/legacy", 2, checks.Info),
			finding("line/blank", 3, checks.Warning)}
	}
	for _, tt := range []struct {
		name string
		path string
		s    ruleFilter
		want []string
	}{
		{"no filter", filepath.Join(dir, "archived/a.jsonl"), ruleFilter{}, []string{"item/missing-id", "compaction/legacy", "line/blank"}},
		{"--ignore", filepath.Join(dir, "a.jsonl"), ruleFilter{rules: ignoreItem}, []string{"compaction/legacy", "line/blank"}},
		{"per-path, other path", filepath.Join(dir, "a.jsonl"), ruleFilter{cfg: cfg}, []string{"item/missing-id", "compaction/legacy", "line/blank"}},
		{"per-path and --ignore", filepath.Join(dir, "archived/a.jsonl"), ruleFilter{ignoreItem, cfg}, []string{"line/blank"}},
	} {
		f := newFile(analysed(tt.path, "", fs()...))
		tt.s.process(f)
		if diff := cmp.Diff(tt.want, rules(f)); diff != "" {
			t.Errorf("%s: kept (-want +got):\n%s", tt.name, diff)
		}
		if f.suppressed+f.hidden != 0 {
			t.Errorf("%s: filtered findings counted (%d suppressed, %d hidden)", tt.name, f.suppressed, f.hidden)
		}
	}
}
