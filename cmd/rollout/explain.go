package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
)

func newExplainCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "explain [RULE|AREA/]",
		Short: "Describe a rule, list an area's rules, or list every rule",
		Example: `  rollout explain
  rollout explain item/missing-id
  rollout explain item/`,
		Args: argsBetween(0, 1, "at most one RULE or AREA/"),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := a.io.Out
			if len(args) == 0 {
				listRules(w, checks.Rules())
				return nil
			}
			if area, ok := strings.CutSuffix(args[0], "/"); ok {
				var in []*checks.Rule
				for _, r := range checks.Rules() {
					if r.Area() == area {
						in = append(in, r)
					}
				}
				if len(in) == 0 {
					return ruleError(&checks.UnknownRuleError{Selector: args[0], Suggestions: checks.Suggest(args[0])})
				}
				listRules(w, in)
				return nil
			}
			r, ok := checks.Lookup(args[0])
			if !ok {
				return ruleError(&checks.UnknownRuleError{Selector: args[0], Suggestions: checks.Suggest(args[0])})
			}
			fmt.Fprint(w, r.Explain())
			return nil
		},
	}
}

func listRules(w io.Writer, rules []*checks.Rule) {
	for _, r := range rules {
		fmt.Fprintf(w, "%-36s %-7s %s\n", r.ID, r.Severity, r.Title)
	}
}

// ruleError turns an unknown rule selector into a usage error whose hint
// names the closest rules, or says where to list them.
func ruleError(err error) error {
	var ue *checks.UnknownRuleError
	if !errors.As(err, &ue) {
		return usageError("list the rules with `rollout explain`", "%v", err)
	}
	hint := "list the rules with `rollout explain`"
	if len(ue.Suggestions) > 0 {
		hint = "did you mean " + strings.Join(ue.Suggestions, ", ") + "? (`rollout explain` lists every rule)"
	}
	return &exitError{code: exitUsage, err: ue, hint: hint}
}
