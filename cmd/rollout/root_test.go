package main

import (
	"context"
	"testing"

	"github.com/spf13/cobra"
)

// A run builds only the command it runs: each name of the table is its
// command's, and that command's help (and each subcommand's) is the same
// as in the whole tree, which help and completion build.
func TestRootBuildsTheCommandItRuns(t *testing.T) {
	t.Parallel()
	helpOf := func(root *cobra.Command, path []string) (string, string) {
		io, out, errb := testIO("")
		root.SetOut(io.Out)
		root.SetErr(io.Err)
		root.SetArgs(append(path, "--help"))
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%v --help: %v", path, err)
		}
		return out.String(), errb.String()
	}
	io, _, _ := testIO("")
	full := newRootCmd(&app{io: io}, "")
	if n := len(newRootCmd(&app{io: io}, "nonesuch").Commands()); n != len(full.Commands()) || n < 16 {
		t.Fatalf("an unknown command built %d commands, the whole tree %d", n, len(full.Commands()))
	}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		path = append(path, c.Name())
		one := newRootCmd(&app{io: io}, path[0])
		if cs := one.Commands(); len(cs) != 1 || cs[0].Name() != path[0] {
			t.Fatalf("a run of %s built %d commands", path[0], len(cs))
		}
		wantOut, wantErr := helpOf(newRootCmd(&app{io: io}, ""), path)
		if gotOut, gotErr := helpOf(one, path); gotOut != wantOut || gotErr != wantErr || wantOut == "" {
			t.Errorf("rollout %v --help: built alone\n%s%s\nin the whole tree\n%s%s", path, gotOut, gotErr, wantOut, wantErr)
		}
		for _, sub := range c.Commands() {
			walk(sub, path)
		}
	}
	for _, c := range full.Commands() {
		walk(c, nil)
	}
}
