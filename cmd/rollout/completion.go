package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/output/report"
)

// formatDocs are the documents whose formats each command's --format
// completes (simulate-budget and merge write one of two).
var formatDocs = map[string][]report.Document{
	"verify": {report.DocVerify}, "home": {report.DocHome}, "diff": {report.DocDiff},
	"space": {report.DocSpace}, "reclaim": {report.DocReclaim},
	"simulate-budget": {report.DocBudget, report.DocFleet}, "merge": {report.DocVerify, report.DocFleet},
}

// registerCompletions makes shell completion (cobra's __complete) offer
// flag values, as gh and golangci-lint do: formats, rule ids and areas,
// reclaim policies and severities. Paths stay the shell's own completion.
func registerCompletions(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		name := cmd.Name()
		if docs, ok := formatDocs[name]; ok && cmd.Flags().Lookup("format") != nil {
			var names []string
			for _, d := range docs {
				names = append(names, report.FormatsOf(d)...)
			}
			cmd.RegisterFlagCompletionFunc("format", formatCompletion(slices.Compact(slices.Sorted(slices.Values(names)))))
		}
		for _, flag := range []string{"select", "ignore"} {
			if cmd.Flags().Lookup(flag) != nil {
				cmd.RegisterFlagCompletionFunc(flag, listCompletion(ruleNames(name == "home")))
			}
		}
		if cmd.Flags().Lookup("policy") != nil {
			cmd.RegisterFlagCompletionFunc("policy", listCompletion(reclaim.Policies))
		}
		if cmd.Flags().Lookup("fail-on") != nil {
			cmd.RegisterFlagCompletionFunc("fail-on", formatCompletion([]string{"error", "warning", "info", "never"}))
		}
		if cmd.Flags().Lookup("show-severity") != nil {
			cmd.RegisterFlagCompletionFunc("show-severity", formatCompletion([]string{"error", "warning", "info"}))
		}
		if name == "explain" {
			cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return withPrefix(append(ruleNames(false), ruleNames(true)...), toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		}
	}
}

// ruleNames are the rule ids and their areas ("ordinal/") of verify's
// rules, or of home's.
func ruleNames(home bool) []string {
	var out []string
	for _, r := range checks.Rules() {
		if (r.Area() == "home") != home {
			continue
		}
		if area := r.Area() + "/"; !slices.Contains(out, area) {
			out = append(out, area)
		}
		out = append(out, r.ID)
	}
	return out
}

// formatCompletion completes one of names (a format, a severity); after
// FORMAT= the shell completes the file.
func formatCompletion(names []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if strings.Contains(toComplete, "=") {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// listCompletion completes the last value of a comma-separated list
// (--select ordinal/,item/m...), keeping the ones before it.
func listCompletion(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done := toComplete[:strings.LastIndex(toComplete, ",")+1]
		var out []string
		for _, v := range values {
			if !slices.Contains(strings.Split(done, ","), v) {
				out = append(out, done+v)
			}
		}
		return withPrefix(out, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// withPrefix keeps the values that complete prefix.
func withPrefix(values []string, prefix string) []string {
	return slices.DeleteFunc(values, func(v string) bool { return !strings.HasPrefix(v, prefix) })
}
