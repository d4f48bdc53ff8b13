// Command docinputs writes the rollouts docs/repair.md's sessions repair,
// taken from the repair fixtures, into DIR.
//
//	go run ./internal/testkit/fixturegen/repairgen/docinputs DIR
package main

import (
	"fmt"
	"os"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/repairgen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: docinputs DIR")
		os.Exit(2)
	}
	if err := repairgen.WriteDocInputs(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "docinputs:", err)
		os.Exit(1)
	}
}
