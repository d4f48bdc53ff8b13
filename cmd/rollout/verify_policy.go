package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
	"github.com/rollout-dev/rollout/internal/derive/policy"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/report"
)

// This file wires what verify needs to serve as a CI gate: the project
// config (.rollout.yaml) under the flags, and the flags into the policy
// (internal/derive/policy), whose ordered steps decide what each file
// reports and how the run exits.

// applyConfig reads --config, or the .rollout.yaml found from the working
// directory upward, and fills every option whose flag was not given.
func (o *verifyOptions) applyConfig(flags *pflag.FlagSet) error {
	path := o.configPath
	if path == "" {
		found, err := config.Find(".")
		if err != nil {
			return usageError("", "looking for %s: %v", config.FileName, err)
		}
		if found == "" {
			return nil
		}
		path = found
	}
	c, err := config.Load(path)
	if err != nil {
		return usageError("fix the file, or name another with --config", "reading config: %v", err)
	}
	if err := checkConfig(c); err != nil {
		return err
	}
	o.cfg = c
	// set applies the config's value when it has one and the flag was not given.
	set := func(flag string, has bool, apply func()) {
		if has && !flags.Changed(flag) {
			apply()
		}
	}
	set("select", c.Select != nil, func() { o.selectRules = c.Select })
	set("ignore", c.Ignore != nil, func() { o.ignoreRules = c.Ignore })
	set("fail-on", c.FailOn != "", func() { o.failOn = c.FailOn })
	set("show-severity", c.ShowSeverity != "", func() { o.showSeverity = c.ShowSeverity })
	set("max-line-bytes", c.MaxLineBytes != nil, func() { o.maxLineBytes = *c.MaxLineBytes })
	set("handoff-cap", c.HandoffCap != nil, func() { o.handoffCap = *c.HandoffCap })
	set("max-findings-per-rule", c.MaxFindingsPerRule != nil, func() { o.maxFindings = *c.MaxFindingsPerRule })
	set("format", c.Format != nil, func() {
		o.formats = nil
		for _, spec := range c.Format {
			if name, file, err := report.ParseFormatSpec(spec); err == nil && file != "" {
				spec = name + "=" + c.Resolve(file)
			}
			o.formats = append(o.formats, spec)
		}
	})
	set("baseline", c.Baseline != "", func() { o.baseline = c.Resolve(c.Baseline) })
	return nil
}

// checkConfig refuses a config whose values the flags would refuse.
func checkConfig(c *config.Config) error {
	bad := func(key, value, want string) error {
		return usageError("fix "+c.Path, "%s: %s: invalid value %q (want %s)", c.Path, key, value, want)
	}
	if c.FailOn != "" {
		if _, err := checks.ParseSeverity(c.FailOn); err != nil && c.FailOn != "never" {
			return bad("fail-on", c.FailOn, "error, warning, info or never")
		}
	}
	if c.ShowSeverity != "" {
		if _, err := checks.ParseSeverity(c.ShowSeverity); err != nil {
			return bad("show-severity", c.ShowSeverity, "error, warning or info")
		}
	}
	for _, list := range append([][]string{c.Select, c.Ignore}, slices.Collect(maps.Values(c.PerPathIgnores))...) {
		if _, err := checks.NewFilter(list, nil); err != nil {
			return usageError("list the rules with `rollout explain`", "%s: %v", c.Path, err)
		}
	}
	for _, spec := range c.Format {
		if _, _, err := report.ParseFormatSpec(spec); err != nil {
			return usageError("formats: "+strings.Join(report.Formats(), ", "), "%s: format: %v", c.Path, err)
		}
	}
	return nil
}

// pipeline builds the policy of a run, reading the baseline first so that
// a malformed one fails before any analysis.
func (o *verifyOptions) pipeline() (*policy.Pipeline, error) {
	po := policy.Options{Filter: o.filter, Config: o.cfg, FailOn: o.failOnSev, Show: o.shown(),
		WriteBaseline: o.writeBaseline != ""}
	// --write-baseline supersedes the old baseline, which may not exist yet
	// (a config that names it, on the first run).
	if o.baseline != "" && o.writeBaseline == "" {
		f, err := os.Open(o.baseline)
		if err != nil {
			return nil, usageError("write one with --write-baseline FILE", "reading the baseline: %v", err)
		}
		defer f.Close()
		if po.Baseline, err = policy.ReadBaseline(f); err != nil {
			return nil, usageError("write it again with --write-baseline "+o.baseline, "reading the baseline %s: %v", o.baseline, err)
		}
	}
	return policy.New(po), nil
}

// shown is the lowest severity displayed: --show-severity, raised to
// --fail-on by --quiet.
func (o *verifyOptions) shown() checks.Severity {
	if o.quiet {
		return max(o.showSev, o.failOnSev)
	}
	return o.showSev
}

// saveBaseline writes the baseline of --write-baseline.
func (o *verifyOptions) saveBaseline(a *app, pipe *policy.Pipeline) error {
	if !pipe.Recording() {
		return nil
	}
	if err := outfile.Write(o.writeBaseline, outfile.Options{}, func(w io.Writer) error {
		return pipe.WriteBaseline(w, "rollout")
	}); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing the baseline to %s: %w", o.writeBaseline, err)}
	}
	printf(a.io.Err, "wrote %s: %d findings accepted", o.writeBaseline, pipe.Suppressed())
	return nil
}

// verifyExitCode is the exit code of a run the policy ranked s.
func verifyExitCode(s policy.Status) int {
	switch s {
	case policy.Failed:
		return exitFindings
	case policy.Incomplete:
		return exitIncomplete
	case policy.Unusable:
		return exitUsage
	case policy.Internal:
		return exitInternal
	}
	return exitOK
}
