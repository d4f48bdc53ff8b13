package main

import (
	"fmt"

	"github.com/rollout-dev/rollout/checks"
	"github.com/spf13/cobra"
)

func newExplainCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "explain [RULE]",
		Short: "Describe a rule, or list every rule",
		Example: `  rollout explain
  rollout explain item/missing-id`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := a.io.Out
			if len(args) == 0 {
				for _, r := range checks.Rules() {
					fmt.Fprintf(w, "%-36s %-7s %s\n", r.ID, r.Severity, r.Title)
				}
				return nil
			}
			r, ok := checks.Lookup(args[0])
			if !ok {
				return usageError("list the rules with `rollout explain`", "unknown rule %q", args[0])
			}
			fmt.Fprint(w, r.Explain())
			return nil
		},
	}
}
