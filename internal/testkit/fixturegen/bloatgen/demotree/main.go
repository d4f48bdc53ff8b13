// Command demotree writes bloatgen's default tree, the sessions tree of the
// README's tour of `rollout space` and `rollout reclaim`: a parent whose 12
// compactions re-embed two images, command output persisted twice, and
// two sub-agents.
//
//	go run ./internal/testkit/fixturegen/bloatgen/demotree DIR
package main

import (
	"fmt"
	"os"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: demotree DIR (a new directory)")
		os.Exit(2)
	}
	if err := build(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "demotree:", err)
		os.Exit(1)
	}
}

func build(dir string) error { return bloatgen.WriteTree(dir) }
