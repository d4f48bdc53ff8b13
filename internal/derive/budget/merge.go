package budget

import (
	"errors"
	"fmt"

	"github.com/rollout-dev/rollout/internal/base/shard"
)

// ErrFittedShards refuses to merge shards run with --compact-at auto: each
// fitted its threshold on its own rollouts.
var ErrFittedShards = errors.New("--compact-at auto fits each shard on its own rollouts; its reports do not merge")

// MergeShards merges the fleets of one run's shards, named (each fleet's
// file) for the errors, into the fleet of the whole run: what a single run
// over the same rollouts gives. It refuses what would not be that fleet,
// in this order: fleets fitted with --compact-at auto (ErrFittedShards)
// or made with other settings, a set of shards that is not whole, then a
// file in two fleets (seen in the rows of --per-session). The first
// fleet becomes the merge.
func MergeShards(names []string, fleets []*Fleet) (*Fleet, error) {
	shards := make([]*shard.Spec, len(fleets))
	for i, f := range fleets {
		shards[i] = f.Shard
	}
	// Found before Merge appends the rows, said after the settings and
	// the shards.
	dup := fileInTwo(names, fleets)
	var fleet *Fleet
	for i, f := range fleets {
		if f.Calibration.Auto && len(fleets) > 1 {
			return nil, fmt.Errorf("%s: %w", names[i], ErrFittedShards)
		}
		if fleet == nil {
			fleet = f
		} else if err := fleet.Merge(f); err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
	}
	// Settings first (Merge compares them), then the set of shards.
	if err := shard.CheckSet(names, shards); err != nil {
		return nil, err
	}
	if dup != nil {
		return nil, dup
	}
	fleet.Shard = nil // the merge is the whole run
	fleet.Finish()
	return fleet, nil
}

// fileInTwo is the first file listed in the per-session rows of two
// fleets, as an error; nil when there is none.
func fileInTwo(names []string, fleets []*Fleet) error {
	fileIn := map[string]int{}
	var dup error
	for i, f := range fleets {
		for _, row := range f.PerSession {
			if j, seen := fileIn[row.Path]; seen && dup == nil {
				dup = fmt.Errorf("%s is in both %s and %s: each file is in one shard", row.Path, names[j], names[i])
			}
			fileIn[row.Path] = i
		}
	}
	return dup
}
