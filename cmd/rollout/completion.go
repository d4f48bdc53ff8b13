package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/suggest"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/output/report"
)

// registerCompletions makes shell completion (cobra's __complete) offer
// flag values, as gh and golangci-lint do. Paths stay the shell's own, as
// does the FILE of --format FORMAT=FILE.
func registerCompletions(root *cobra.Command) {
	docs := map[string][]report.Document{"verify": {report.DocVerify}, "home": {report.DocHome}, "diff": {report.DocDiff},
		"space": {report.DocSpace}, "reclaim": {report.DocReclaim}, "simulate-budget": {report.DocBudget, report.DocFleet},
		"merge": {report.DocVerify, report.DocFleet}}
	one := func(values []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, partial string) ([]string, cobra.ShellCompDirective) {
			if strings.Contains(partial, "=") {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return suggest.Complete(values, partial), cobra.ShellCompDirectiveNoFileComp
		}
	}
	list := func(values []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, partial string) ([]string, cobra.ShellCompDirective) {
			return suggest.CompleteList(values, partial), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
	}
	for _, cmd := range root.Commands() {
		var formats []string
		for _, d := range docs[cmd.Name()] {
			formats = append(formats, report.FormatsOf(d)...)
		}
		rules := checks.Names(cmd.Name() == "home")
		for flag, complete := range map[string]cobra.CompletionFunc{"format": one(slices.Compact(slices.Sorted(slices.Values(formats)))),
			"select": list(rules), "ignore": list(rules), "policy": list(reclaim.Policies),
			"fail-on": one([]string{"error", "warning", "info", "never"}), "show-severity": one([]string{"error", "warning", "info"})} {
			if cmd.Flags().Lookup(flag) != nil {
				cmd.RegisterFlagCompletionFunc(flag, complete)
			}
		}
	}
	explain, _, _ := root.Find([]string{"explain"})
	explain.ValidArgsFunction = func(c *cobra.Command, args []string, partial string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return one(append(checks.Names(false), checks.Names(true)...))(c, args, partial)
	}
}
