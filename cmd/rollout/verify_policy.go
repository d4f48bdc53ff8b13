package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
	"github.com/rollout-dev/rollout/internal/derive/baseline"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/rollout"
)

// This file holds what verify needs to serve as a CI gate: the project
// config (.rollout.yaml), the baseline, and what is shown (--quiet,
// --show-severity). The order for each file is fixed: rule filters
// (--select, --ignore, per-path ignores), then the baseline, then the exit
// code (--fail-on), then what is displayed.

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
	o.cfg = c
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
	for _, list := range append([][]string{c.Select, c.Ignore}, values(c.PerPathIgnores)...) {
		if _, err := checks.NewFilter(list, nil); err != nil {
			return usageError("list the rules with `rollout explain`", "%s: %v", c.Path, err)
		}
	}
	set := func(flag string, apply func()) {
		if !flags.Changed(flag) {
			apply()
		}
	}
	if c.Select != nil {
		set("select", func() { o.selectRules = c.Select })
	}
	if c.Ignore != nil {
		set("ignore", func() { o.ignoreRules = c.Ignore })
	}
	if c.FailOn != "" {
		set("fail-on", func() { o.failOn = c.FailOn })
	}
	if c.ShowSeverity != "" {
		set("show-severity", func() { o.showSeverity = c.ShowSeverity })
	}
	if c.MaxLineBytes != nil {
		set("max-line-bytes", func() { o.maxLineBytes = *c.MaxLineBytes })
	}
	if c.HandoffCap != nil {
		set("handoff-cap", func() { o.handoffCap = *c.HandoffCap })
	}
	if c.MaxFindingsPerRule != nil {
		set("max-findings-per-rule", func() { o.maxFindings = *c.MaxFindingsPerRule })
	}
	for _, spec := range c.Format {
		if _, _, err := report.ParseFormatSpec(spec); err != nil {
			return usageError("formats: "+strings.Join(report.Formats(), ", "), "%s: format: %v", c.Path, err)
		}
	}
	if c.Format != nil {
		set("format", func() {
			o.formats = nil
			for _, spec := range c.Format {
				if name, file, err := report.ParseFormatSpec(spec); err == nil && file != "" {
					spec = name + "=" + c.Resolve(file)
				}
				o.formats = append(o.formats, spec)
			}
		})
	}
	if c.Baseline != "" {
		set("baseline", func() { o.baseline = c.Resolve(c.Baseline) })
	}
	return nil
}

func values(m map[string][]string) [][]string {
	var out [][]string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// verifyPolicy applies the options to each file's findings, in input order.
type verifyPolicy struct {
	filter checks.Filter
	cfg    *config.Config
	failOn checks.Severity
	show   checks.Severity // lowest severity displayed

	accepted   *baseline.Set     // --baseline, or nil
	record     *baseline.Builder // --write-baseline, or nil
	recordPath string
	suppressed int
}

// policy builds the policy of a run, reading the baseline first so that a
// malformed one fails before any analysis.
func (o *verifyOptions) policy() (*verifyPolicy, error) {
	p := &verifyPolicy{cfg: o.cfg, failOn: o.failOnSev, filter: o.filter, show: o.showSev}
	if o.quiet {
		p.show = max(p.show, p.failOn)
	}
	// --write-baseline supersedes the old baseline, which may not exist yet
	// (a config that names it, on the first run).
	if o.baseline != "" && o.writeBaseline == "" {
		f, err := os.Open(o.baseline)
		if err != nil {
			return nil, usageError("write one with --write-baseline FILE", "reading the baseline: %v", err)
		}
		defer f.Close()
		if p.accepted, err = baseline.Read(f); err != nil {
			return nil, usageError("write it again with --write-baseline "+o.baseline, "reading the baseline %s: %v", o.baseline, err)
		}
	}
	if o.writeBaseline != "" {
		p.record, p.recordPath = &baseline.Builder{}, o.writeBaseline
	}
	return p, nil
}

// fingerprints reports whether findings need their baseline fingerprint.
func (p *verifyPolicy) fingerprints() bool { return p.accepted != nil || p.record != nil }

// fileResult turns one analysed file into its report entry: the rule
// filters, then the baseline (a finding it lists is counted, not kept).
func (p *verifyPolicy) fileResult(out fileOutcome) result.FileResult {
	res := out.res
	st := res.State
	fr := result.FileResult{Path: res.Path, Records: res.Records, Era: string(st.Era),
		HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion, ThreadID: st.ThreadID}
	perPath := checks.Filter{}
	if p.cfg != nil {
		perPath, _ = checks.NewFilter(nil, p.cfg.IgnoredAt(res.Path))
	}
	identity := baseline.Identity(st.ThreadID, res.Path)
	// Filtered in place: the result is the command's own (slim), and a
	// copy would double what a file with many findings holds.
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		if !p.filter.Keep(f.Rule) || !perPath.Keep(f.Rule) {
			continue
		}
		if p.fingerprints() {
			hash, ok := out.hashes[f.Line]
			if !ok {
				// Standard input cannot be read twice: the message stands
				// in for the record.
				hash = "message:" + f.Message
			}
			fp := baseline.Fingerprint(f.Rule, identity, hash)
			if p.record != nil {
				p.record.Add(fp, f.Rule, res.Path, f.Line, f.Message)
				p.suppressed++
				continue
			}
			if p.accepted.Suppress(fp) {
				p.suppressed++
				continue
			}
		}
		kept = append(kept, f)
	}
	clear(res.Findings[len(kept):])
	fr.Findings = kept
	return fr
}

// hide drops the findings below the displayed severity and counts them.
func (p *verifyPolicy) hide(fr *result.FileResult) int {
	kept := fr.Findings[:0]
	for _, f := range fr.Findings {
		if f.Severity >= p.show {
			kept = append(kept, f)
		}
	}
	hidden := len(fr.Findings) - len(kept)
	fr.Findings = kept
	return hidden
}

// finish writes the baseline of --write-baseline.
func (p *verifyPolicy) finish(a *app) error {
	if p.record == nil {
		return nil
	}
	bl := p.record.File("rollout")
	if err := outfile.Write(p.recordPath, outfile.Options{}, func(w io.Writer) error {
		return baseline.Write(w, bl)
	}); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing the baseline to %s: %w", p.recordPath, err)}
	}
	printf(a.io.Err, "wrote %s: %d findings accepted", p.recordPath, p.suppressed)
	return nil
}

// hashFindingRecords hashes the records a file's findings are on, reading
// the file a second time (only when a baseline is used). It returns nil for
// standard input or when the file cannot be read again.
func hashFindingRecords(path string, res *checks.Result, maxLineBytes int64) map[int]string {
	if path == rollout.StdinPath || len(res.Findings) == 0 {
		return nil
	}
	f, err := rollout.Open(path, nil)
	if err != nil {
		return nil
	}
	defer f.Close()
	lines := make([]int, len(res.Findings))
	for i, fd := range res.Findings {
		lines[i] = fd.Line
	}
	hashes, err := baseline.HashRecords(f, lines, maxLineBytes)
	if err != nil {
		return nil
	}
	return hashes
}
