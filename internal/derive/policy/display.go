package policy

import "github.com/rollout-dev/rollout/checks"

// hideBelow drops the findings below the displayed severity (--quiet,
// --show-severity) and counts them.
type hideBelow struct{ show checks.Severity }

func (hideBelow) name() string { return "hide" }

func (s hideBelow) process(f *file) {
	f.hidden += f.keep(func(i int) bool { return f.entry.Findings[i].Severity >= s.show })
}

// normalize puts the entry in the canonical order every printer expects,
// without exact duplicates (result.FileResult.Normalize).
type normalize struct{}

func (normalize) name() string { return "normalize" }

func (normalize) process(f *file) {
	f.fingerprints = nil // they would not follow the sort
	f.entry.Normalize()
}
