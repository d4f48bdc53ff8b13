package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// argsBetween accepts lo to hi arguments (hi < 0: no limit), with an error
// that says what the command expects, where cobra's own says only
// "accepts 1 arg(s), received 0".
func argsBetween(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || hi >= 0 && len(args) > hi {
			return argCountError(cmd, args, what)
		}
		return nil
	}
}

func argCountError(cmd *cobra.Command, args []string, what string) error {
	got := "none"
	if len(args) > 0 {
		got = fmt.Sprintf("%d: %q", len(args), args)
	}
	return usageError("usage: "+cmd.UseLine(), "%s expects %s; got %s", cmd.CommandPath(), what, got)
}
