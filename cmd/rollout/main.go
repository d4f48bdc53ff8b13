// Command rollout verifies, repairs and analyses Codex rollouts. This is the
// last stage of the flow: it wires flags, files and streams to the library
// packages and prints their results; it holds no format knowledge itself.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	setMemoryLimit(os.Getenv("GOMEMLIMIT"))
	os.Exit(run(os.Args[1:], systemIO()))
}

// softMemoryLimit bounds the collector's headroom: with the default GOGC
// the heap may grow to twice what is live before a collection, which put a
// repair holding 170 MB for a million fixes at 306 MiB. Near the limit the
// collector runs more often (a repair of a million blank lines: 220 MiB
// peak at 1.4x the CPU); far below it, as nearly every run is, it changes
// nothing. It is soft: a run that holds more stays correct, at up to
// twice the CPU while it does.
const softMemoryLimit = 256 << 20

// setMemoryLimit applies softMemoryLimit unless the user set GOMEMLIMIT
// (the runtime has read it then).
func setMemoryLimit(env string) {
	if env == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
}
