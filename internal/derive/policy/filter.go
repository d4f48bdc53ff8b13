package policy

import (
	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
)

// ruleFilter keeps the findings of the rules selected (--select, --ignore)
// and not ignored at the file's path by the config (per_path_ignores).
type ruleFilter struct {
	rules checks.Filter
	cfg   *config.Config // nil when no config file applies
}

func (ruleFilter) name() string { return "select" }

func (s ruleFilter) process(f *file) {
	perPath := checks.Filter{}
	if s.cfg != nil {
		// The config's rule lists were checked when it was loaded.
		perPath, _ = checks.NewFilter(nil, s.cfg.IgnoredAt(f.entry.Path))
	}
	f.keep(func(i int) bool {
		rule := f.entry.Findings[i].Rule
		return s.rules.Keep(rule) && perPath.Keep(rule)
	})
}
