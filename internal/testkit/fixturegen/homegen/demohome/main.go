// Command demohome lays out a small Codex home for the README's tour of
// `rollout home`: the base home Codex 0.171.0 made (fixtures/home), with
// two drifts a support engineer meets: the thread's row deleted (the
// session is missing from the resume picker) and a writer-lock file left
// by a process that is gone.
//
//	go run ./internal/testkit/fixturegen/homegen/demohome DIR
package main

import (
	"fmt"
	"os"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: demohome DIR (a new directory)")
		os.Exit(2)
	}
	if err := build(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "demohome:", err)
		os.Exit(1)
	}
}

func build(dir string) error { return homegen.Demo(dir) }
