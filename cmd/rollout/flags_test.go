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
	walk(newRootCmd(&app{io: io}, ""))
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

// Output flags are the same everywhere: a command that writes a report in
// a --format also takes -o, --output FILE (issue 27: verify had none where
// view and simulate-budget had one).
func TestOutputFlagsConsistent(t *testing.T) {
	formats := map[string]bool{}
	outputs := map[string]*pflag.Flag{}
	eachFlag(func(c *cobra.Command, f *pflag.Flag) {
		switch f.Name {
		case "format":
			formats[c.CommandPath()] = true
		case "output":
			outputs[c.CommandPath()] = f
		}
	})
	if len(formats) < 5 {
		t.Fatalf("only %d commands with --format", len(formats))
	}
	for cmd := range formats {
		o := outputs[cmd]
		if o == nil {
			t.Errorf("%s has --format but no -o", cmd)
			continue
		}
		if o.Shorthand != "o" || !strings.Contains(o.Usage, "- for standard output") {
			t.Errorf("%s -o: shorthand %q, usage %q", cmd, o.Shorthand, o.Usage)
		}
	}
	// Every -o, --output shows its value as FILE (repair's and view's
	// showed "string").
	for cmd, o := range outputs {
		if name, _ := pflag.UnquoteUsage(o); name != "FILE" {
			t.Errorf("%s --help shows -o, --output %s, want -o, --output FILE", cmd, name)
		}
	}
}
