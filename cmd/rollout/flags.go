package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// The flags several commands share, each with its one parser: a command's
// validate calls it once and keeps the result in its options.

// Every output a command writes (a --format FORMAT=FILE, -o FILE, --series
// FILE, --report FILE) goes to standard output when FILE is "-", as "-"
// reads standard input; -o, where a command writes reports with --format,
// names the file of the one format that has none.

// isStdout reports whether an output path is standard output: none, or "-".
func isStdout(path string) bool { return path == "" || path == "-" }

// addOutput adds -o, --output FILE; what says what is written.
func addOutput(f *pflag.FlagSet, p *string, what string) {
	f.StringVarP(p, "output", "o", "", "write "+what+" to `FILE` instead of standard output (- for standard output)")
}

// writeOutput writes what render makes to path, through a temporary file
// renamed into place (outfile), or to standard output for "" and "-".
// what names the output in an error ("the JSON report").
func writeOutput(a *app, path, what string, render func(io.Writer) error) error {
	if isStdout(path) {
		if err := render(a.io.Out); err != nil {
			return fmt.Errorf("writing %s: %w", what, err)
		}
		return nil
	}
	if err := outfile.Write(path, outfile.Options{}, render); err != nil {
		if isExitError(err) {
			return err
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s to %s: %w", what, path, err)}
	}
	return nil
}

// checkOutputsOf refuses, before anything is read, an output file that is
// one of the inputs (or an input's quarantine or backup), then creates the
// missing directories of the others (reports/ of --format
// json=reports/verify-1.json), so that a path that cannot be written
// fails now, not after the run. Outputs to standard output ("" or "-")
// need neither: then no input is stat'ed.
func checkOutputsOf(inputs []string, outputs ...string) error {
	if !slices.ContainsFunc(outputs, func(out string) bool { return !isStdout(out) }) {
		return nil
	}
	var in outfile.Inputs
	in.Add(inputs...)
	if err := in.Check(outputs...); err != nil {
		return outputConflict(err)
	}
	for _, out := range outputs {
		if isStdout(out) {
			continue
		}
		if err := outfile.MakeParents(out); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("cannot write %s: %w", out, err)}
		}
	}
	return nil
}

// oneFormatOnStdout refuses two formats on standard output: they would
// interleave.
func oneFormatOnStdout(n int) error {
	if n > 1 {
		return usageError("write the others to files with --format FORMAT=FILE (or -o FILE)", "only one --format can write to standard output")
	}
	return nil
}

// addSourceRoot adds --source-root DIR, the root SARIF's %SRCROOT% and
// the Code Quality paths are relative to (as golangci-lint's --path-prefix
// makes its paths fit the repository).
func addSourceRoot(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "source-root", "", "sarif and codeclimate name files relative to `DIR` (default: the git work tree holding the working directory, else the working directory)")
}

// sourceRoot resolves --source-root to an absolute directory: the flag, or
// report.DefaultSourceRoot.
func sourceRoot(flag string) (string, error) {
	if flag == "" {
		return report.DefaultSourceRoot()
	}
	abs, err := filepath.Abs(flag)
	if err != nil {
		return "", err
	}
	if !isDir(abs) {
		return "", usageError("name the repository's root directory", "--source-root %s is not a directory", flag)
	}
	return abs, nil
}

// reportOutput is one --format FORMAT[=FILE]: the format and the file it
// writes ("" for standard output).
type reportOutput struct{ name, file string }

// filesOf are the files outs are written to ("" for standard output).
func filesOf(outs []reportOutput) []string {
	files := make([]string, len(outs))
	for i, out := range outs {
		files[i] = out.file
	}
	return files
}

// parseOutputs parses every command's --format list (one value for the
// commands whose --format is not repeatable) with -o: each a format of doc
// (report's table), no list means doc's first format, a format without
// FILE goes to -o's file (or standard output), and at most one output may
// go to standard output.
func parseOutputs(doc report.Document, specs []string, output string) ([]reportOutput, error) {
	if len(specs) == 0 {
		specs = report.FormatsOf(doc)[:1]
	}
	outs := make([]reportOutput, 0, len(specs))
	stdout := 0
	for _, spec := range specs {
		name, file, err := report.ParseFormat(doc, spec)
		if err != nil {
			hint := ""
			if fe := (*report.FormatError)(nil); errors.As(err, &fe) {
				hint = fe.Hint()
			}
			return nil, usageError(hint, "%v", err)
		}
		if isStdout(file) {
			file = ""
			if !isStdout(output) {
				file = output
			}
		}
		if f, _ := report.LookupFormat(doc, name); f.Dir && file == "" {
			return nil, usageError(fmt.Sprintf("name the directory: --format %s=DIR", name), "--format %s writes tables into a directory, not to standard output", name)
		}
		if file == "" {
			stdout++
		}
		outs = append(outs, reportOutput{name, file})
	}
	if err := oneFormatOnStdout(stdout); err != nil {
		return nil, err
	}
	if !isStdout(output) && !slices.ContainsFunc(outs, func(o reportOutput) bool { return o.file == output }) {
		return nil, usageError("give -o with one --format that names no FILE", "-o %s: every --format names its own file", output)
	}
	if err := sameFileTwice(outs); err != nil {
		return nil, err
	}
	return outs, nil
}

// refuseBinaryOnTerminal refuses a binary format (a PNG image) bound for
// standard output when it is a terminal; hint says how to write it.
func refuseBinaryOnTerminal(a *app, doc report.Document, outs []reportOutput, hint string) error {
	for _, out := range outs {
		if f, _ := report.LookupFormat(doc, out.name); f.Binary != "" && out.file == "" && a.io.OutIsTTY {
			return usageError(hint, "refusing to write %s to a terminal", f.Binary)
		}
	}
	return nil
}

// sameFileTwice refuses two reports written to one file.
func sameFileTwice(outs []reportOutput) error {
	seen := map[string]string{}
	for _, o := range outs {
		if o.file == "" {
			continue
		}
		if prev, ok := seen[o.file]; ok {
			return usageError("give each format its own file", "--format %s and --format %s both write %s", prev, o.name, o.file)
		}
		seen[o.file] = o.name
	}
	return nil
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

// parseShardFlag parses --shard ("" for none: nil); K may be "index",
// the 0-based $JOB_COMPLETION_INDEX of a Kubernetes Indexed Job plus one,
// for containers without a shell to add it.
func parseShardFlag(s string) (*shard.Spec, error) {
	if s == "" {
		return nil, nil
	}
	sp, err := shard.Parse(s, os.Getenv)
	if err != nil {
		return nil, usageError("use --shard K/N with 1 <= K <= N, e.g. --shard 2/4 (or index/N in a Kubernetes Indexed Job)", "%v", err)
	}
	return &sp, nil
}

// replayFlags are the flags that say how a rollout is read, declared here
// once with their defaults, usage and validation: --max-line-bytes for
// every command that reads rollouts, --handoff-cap for those that judge
// handoffs, --force for those that may read (or write) a file with a
// damaged first line. A command's options embed it, and build a replay
// with replayOptions.
type replayFlags struct {
	maxLineBytes int64
	handoffCap   int64 // stays 0 without addHandoffCap
	capped       bool  // the command has --handoff-cap
	force        bool  // --force, with addForce
}

// addMaxLineBytes adds --max-line-bytes; longer says what becomes of a
// longer line in this command.
func (l *replayFlags) addMaxLineBytes(f *pflag.FlagSet, longer string) {
	f.Int64Var(&l.maxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to read, in bytes; "+longer)
}

// addHandoffCap adds --handoff-cap; what says what the cap decides here.
func (l *replayFlags) addHandoffCap(f *pflag.FlagSet, what string) {
	f.Int64Var(&l.handoffCap, "handoff-cap", reconstruct.DefaultHandoffCap, "cap of a context handoff's budget ("+what+")")
	l.capped = true
}

// addForce adds --force, with one of the usages below.
func (l *replayFlags) addForce(f *pflag.FlagSet, usage string) {
	f.BoolVar(&l.force, "force", false, usage)
}

// validateLimits refuses a limit below 1 for each flag the command has.
func (l *replayFlags) validateLimits() error {
	if l.capped && l.handoffCap < 1 {
		return usageError("", "invalid --handoff-cap %d", l.handoffCap)
	}
	if l.maxLineBytes < 1 {
		return usageError("", "invalid --max-line-bytes %d", l.maxLineBytes)
	}
	return nil
}

// replayOptions is the replay of the rollout at path these flags ask for:
// lin resolves its lineage (nil: the file alone).
func (l *replayFlags) replayOptions(path string, lin *lineages) reconstruct.ReplayOptions {
	ro := reconstruct.ReplayOptions{
		Options:      reconstruct.Options{HandoffCap: l.handoffCap},
		Open:         rollout.OpenOptions{Force: l.force},
		MaxLineBytes: l.maxLineBytes,
	}
	if lin != nil {
		ro.Ancestry = func() *reconstruct.Ancestry { return lin.ancestry(path) }
	}
	return ro
}

// The usages of --force: what it lets a command do. A command that only
// reads says which inputs; repair and reclaim, which write, say more.
const (
	damagedFirstLine = "whose first line is not a JSON object (a damaged first line)"
	forceReadFile    = "read a file " + damagedFirstLine
	forceReadFiles   = "read files " + damagedFirstLine
	forceRepair      = "repair a file " + damagedFirstLine + "; with --write, replace FILE even while another process holds it open for writing (what it writes next is lost)"
	forceReclaim     = "write a file another process holds open for writing (an agent idle between turns would then write to the replaced file)"
)
