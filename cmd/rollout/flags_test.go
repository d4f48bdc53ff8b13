package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// eachFlag calls fn for every flag of every command.
func eachFlag(fn func(c *cobra.Command, f *pflag.Flag)) {
	io, _, _ := testIO("")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { fn(c, f) })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&app{io: io}))
}

// pflag takes a usage's first `backquoted` word as the name of the value
// in the help (--thread ID): a backquoted command in a usage line became
// "--thread rollout find". Every value name is a placeholder in capitals.
func TestFlagValueNames(t *testing.T) {
	placeholder := regexp.MustCompile(`^[A-Z][A-Z0-9_]*(/[A-Z0-9_]+)?$`)
	eachFlag(func(c *cobra.Command, f *pflag.Flag) {
		if !strings.Contains(f.Usage, "`") {
			return
		}
		if name, _ := pflag.UnquoteUsage(f); !placeholder.MatchString(name) {
			t.Errorf("%s --%s: the help shows its value as %q", c.CommandPath(), f.Name, name)
		}
	})
}
