// Command gendocs writes docs/checks.md from the rule registry to stdout
// (`make docs`).
package main

import (
	"fmt"
	"os"

	"github.com/rollout-dev/rollout/checks"
)

func main() {
	if err := checks.WriteMarkdown(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
