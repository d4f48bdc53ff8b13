package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rollout-dev/rollout/internal/base/suggest"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Exit codes: stable, documented in `rollout help exit-codes`.
const (
	exitOK         = 0
	exitFindings   = 1
	exitUsage      = 2
	exitIncomplete = 3
	exitUnsafe     = 4
	exitInternal   = 5
)

const exitCodesHelp = `Exit codes (stable; they never depend on the output format):

  0  clean, or only findings below --fail-on
  1  findings at or above --fail-on (default error)
  2  usage error or unusable input (bad flag, path not found, a named file
     that cannot be read)
  3  incomplete: some records or files could not be analysed (a line over
     --max-line-bytes, a read error, a file changed while read, an entry of
     a walked directory that cannot be read or is not a regular file);
     every report lists them
  4  unsafe to modify: repair --write refused (file changed during repair,
     symlink, write failed); the original is untouched
  5  internal error: a bug, reported with the file and line being read

When several apply, the highest-priority code wins: 5, then 2, 4, 3, 1.`

// exitError carries an exit code and an optional hint to the user.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

func usageError(hint string, format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...), hint: hint}
}

// outputConflict is an output path that names an input: a usage error,
// caught before anything is read.
func outputConflict(err error) error {
	return &exitError{code: exitUsage, err: err, hint: "write the output to another path"}
}

// silentExit ends with a code and no message (the report said it all).
func silentExit(code int) error { return &exitError{code: code} }

type app struct {
	io *IO
}

// lazy is a command's constructor without its test hook.
func lazy[F any](build func(*app, F) *cobra.Command) func(*app) *cobra.Command {
	return func(a *app) *cobra.Command { var none F; return build(a, none) }
}

// newRootCmd builds the command tree: with only naming a command, just
// that one under the root.
func newRootCmd(a *app, only string) *cobra.Command {
	root := &cobra.Command{
		Use:   "rollout",
		Short: "Verify, repair and analyse AI coding-agent rollouts (Codex session logs)",
		Long: `rollout streams Codex rollouts (~/.codex/sessions/**/rollout-*.jsonl) through a
replay engine that reconstructs them as resume does, and reports every
inconsistency with a stable rule id, file and line.

` + exitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
		// Cobra's suggestions are lines of its error; commandHint makes
		// them our hint.
		DisableSuggestions: true,
	}
	root.SetVersionTemplate(versionLine() + "\n" + checkedLine() + "\n") // two lines, as gh's; `rollout version` has the tables
	root.SetOut(a.io.Out)
	root.SetErr(a.io.Err)
	root.SetIn(a.io.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err, hint: flagHint(c, err)}
	})
	// A run builds the command it runs, not all sixteen and their flags;
	// help, completion and an unknown command build them all.
	commands := map[string]func(*app) *cobra.Command{"verify": lazy(newVerifyCmd), "state": lazy(newStateCmd), "version": newVersionCmd,
		"explain": newExplainCmd, "simulate-budget": lazy(newSimulateBudgetCmd), "merge": newMergeCmd, "repair": lazy(newRepairCmd),
		"view": lazy(newViewCmd), "space": lazy(newSpaceCmd), "reclaim": lazy(newReclaimCmd), "find": lazy(newFindCmd), "diff": lazy(newDiffCmd),
		"home": lazy(newHomeCmd), "artifacts": lazy(newArtifactsCmd), "plan": newPlanCmd, "exit-codes": func(*app) *cobra.Command {
			return &cobra.Command{Use: "exit-codes", Short: "The exit codes of every command", Long: exitCodesHelp}
		}}
	if build, ok := commands[only]; ok {
		root.AddCommand(build(a))
		return root
	}
	for _, build := range commands {
		root.AddCommand(build(a))
	}
	registerCompletions(root)
	return root
}

// run is the only place that prints errors and maps them to exit codes.
func run(args []string, io *IO) (code int) {
	defer func() {
		if v := recover(); v != nil {
			internalf(io.Err, "%v", v)
			io.Err.Write(debug.Stack())
			code = exitInternal
		}
	}()
	only := ""
	if len(args) > 0 {
		only = args[0]
	}
	root := newRootCmd(&app{io: io}, only)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return exitOK
	}
	return reportError(io, commandHint(root, err))
}

// commandHint gives cobra's unknown-command error the nearest commands as
// its hint, as flagHint does for flags.
func commandHint(root *cobra.Command, err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "unknown command ")
	quoted, qerr := strconv.QuotedPrefix(rest)
	if !ok || qerr != nil {
		return err
	}
	name, _ := strconv.Unquote(quoted)
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	hint := suggest.Hint(name, names, 2, func(n string) string { return "`rollout " + n + "`" }, "see `rollout --help`")
	return &exitError{code: exitUsage, err: err, hint: hint}
}

func reportError(io *IO, err error) int {
	code := exitUsage
	var ee *exitError
	var ie *reconstruct.InternalError
	var pe *rollout.PathError
	switch {
	case errors.As(err, &ie):
		code = exitInternal
		internalf(io.Err, "%s:%d: %v", ie.Path, ie.Line, ie.Value)
		hintf(io.Err, "this is a bug; please report it with the file if you can share it")
		return code
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, new(*reconstruct.ReadError)):
		code = exitIncomplete
	case errors.As(err, &pe), errors.Is(err, fs.ErrNotExist):
		code = exitUsage
	}
	// Messages name files, and a file name is anyone's bytes: escaped.
	if msg := err.Error(); msg != "" {
		errorf(io.Err, "%s", termsafe.String(msg))
	}
	if ee != nil && ee.hint != "" {
		hintf(io.Err, "%s", termsafe.String(ee.hint))
	} else if hint := inputHint(err); hint != "" {
		hintf(io.Err, "%s", hint)
	}
	return code
}

// flagHint is the hint of a flag error: for an unknown flag, the nearest
// flags the command has, then its help.
func flagHint(c *cobra.Command, err error) string {
	help := "see `" + c.CommandPath() + " --help`"
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return help
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return suggest.Hint(name, names, 2, func(n string) string { return "--" + n }, help)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// inputHint is the hint for an input that could not be read.
func inputHint(err error) string {
	if errors.Is(err, rollout.ErrFirstLineNotObject) {
		return "if only the first line is damaged and the rest is a rollout, add --force"
	}
	if pe := (*rollout.PathError)(nil); errors.As(err, &pe) && isDir(pe.Path) {
		return "this command reads one rollout: name a rollout-*.jsonl file in it, or the thread with --thread ID"
	}
	return ""
}
