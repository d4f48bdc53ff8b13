// Command rollout verifies, repairs and analyses Codex rollouts. This is the
// last stage of the flow: it wires flags, files and streams to the library
// packages and prints their results; it holds no format knowledge itself.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], systemIO()))
}
