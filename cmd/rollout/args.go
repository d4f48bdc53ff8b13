package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Argument-count checks whose errors say what the command expects, where
// cobra's own say only "accepts 1 arg(s), received 0".

func argsExactly(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return argCountError(cmd, args, what)
		}
		return nil
	}
}

func argsAtMost(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
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
