package main

import (
	"github.com/spf13/pflag"
)

// addQuiet adds --quiet to a command whose only chatter is its progress.
func addQuiet(f *pflag.FlagSet, p *bool) {
	f.BoolVarP(p, "quiet", "q", false, "no progress line on the terminal")
}

// showProgress is whether a command shows progress: on a terminal, and
// not with --quiet.
func showProgress(a *app, quiet bool) bool { return a.io.ErrIsTTY && !quiet }
