package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/report"
)

// The flags several commands share, each with its one parser: a command's
// validate calls it once and keeps the result in its options.

// reportOutput is one --format FORMAT[=FILE]: the printer and the file it
// writes ("" for standard output).
type reportOutput struct{ name, file string }

// parseOutputs parses verify's (and merge's) --format list: no list means
// text on standard output, and at most one output may go there.
func parseOutputs(specs []string) ([]reportOutput, error) {
	if len(specs) == 0 {
		specs = []string{"text"}
	}
	outs := make([]reportOutput, 0, len(specs))
	stdout := 0
	for _, spec := range specs {
		name, file, err := report.ParseFormatSpec(spec)
		if err != nil {
			return nil, usageError("formats: "+strings.Join(report.Formats(), ", "), "%v", err)
		}
		if file == "" {
			stdout++
		}
		outs = append(outs, reportOutput{name, file})
	}
	if stdout > 1 {
		return nil, usageError("write the others to files with --format FORMAT=FILE", "only one --format can write to standard output")
	}
	return outs, nil
}

// parseFailOn parses --fail-on: a severity, or never (report.NeverFail).
func parseFailOn(s string) (checks.Severity, error) {
	if s == "never" {
		return report.NeverFail, nil
	}
	sev, err := checks.ParseSeverity(s)
	if err != nil {
		return 0, usageError("use --fail-on error|warning|info|never", "invalid --fail-on %q", s)
	}
	return sev, nil
}

// shardSpec is --shard K/N; n == 0 when the flag is not given.
type shardSpec struct{ k, n int }

// parseShardFlag parses --shard ("" for none).
func parseShardFlag(s string) (shardSpec, error) {
	if s == "" {
		return shardSpec{}, nil
	}
	k, n, err := parseShard(s)
	if err != nil {
		return shardSpec{}, usageError("use --shard K/N with 1 <= K <= N, e.g. --shard 2/4", "%v", err)
	}
	return shardSpec{k, n}, nil
}

func parseShard(s string) (k, n int, err error) {
	ks, ns, ok := strings.Cut(s, "/")
	if ok {
		k, err = strconv.Atoi(ks)
		if err == nil {
			n, err = strconv.Atoi(ns)
		}
	}
	if !ok || err != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("invalid --shard %q", s)
	}
	return k, n, nil
}
