package result

import (
	"fmt"
	"slices"

	"github.com/rollout-dev/rollout/internal/base/shard"
)

// Merge combines the reports of one run split into shards (verify --shard
// K/N), named names in its errors. They must be the shards of one run:
// the same tool, version, command and settings, each shard of the same N
// once and none missing, no file in two of them. The result has the files
// of each, the counts of suppressed and hidden findings added, the notes
// of all without repeats (those of every shard first, then the others
// sorted), and no shard; it is normalized, so it prints as the single run
// does.
func Merge(reps []*Report, names []string) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("no report to merge")
	}
	first := reps[0]
	out := &Report{Tool: first.Tool, Version: first.Version, Command: first.Command, Settings: first.Settings}
	shards := make([]*shard.Spec, len(reps))
	fileIn := map[string]int{}
	for i, r := range reps {
		if r.Tool != out.Tool || r.Version != out.Version || r.Command != out.Command {
			return nil, fmt.Errorf("%s is %s %s %s, %s is %s %s %s: only shards of one run merge",
				names[i], r.Tool, r.Version, r.Command, names[0], out.Tool, out.Version, out.Command)
		}
		if r.Settings == nil {
			return nil, fmt.Errorf("%s records no settings (a report of an older rollout): run its shard again to merge it", names[i])
		}
		if d := first.Settings.Differ(r.Settings); d != "" {
			return nil, fmt.Errorf("%s and %s were made with different settings (%s): only shards of one run merge", names[0], names[i], d)
		}
		shards[i] = r.Shard
	}
	if err := shard.CheckSet(names, shards); err != nil {
		return nil, err
	}
	for i, r := range reps {
		for _, f := range r.Files {
			if j, dup := fileIn[f.Path]; dup {
				return nil, fmt.Errorf("%s is in both %s and %s: each file is in one shard", f.Path, names[j], names[i])
			}
			fileIn[f.Path] = i
		}
	}
	// The notes every shard made are the run's, in their order; the others
	// are about the files of one shard (a lineage not followed), sorted, as
	// the single run lists them after its own.
	in := map[string]int{}
	for _, r := range reps {
		out.Files = append(out.Files, r.Files...)
		out.Suppressed += r.Suppressed
		out.Hidden += r.Hidden
		for _, n := range slices.Compact(slices.Clone(r.Notes)) {
			in[n]++
		}
	}
	var some []string
	for _, n := range first.Notes {
		if in[n] == len(reps) && !slices.Contains(out.Notes, n) {
			out.Notes = append(out.Notes, n)
		}
	}
	for n, k := range in {
		if k < len(reps) {
			some = append(some, n)
		}
	}
	slices.Sort(some)
	out.Notes = append(out.Notes, some...)
	out.Normalize()
	return out, nil
}
