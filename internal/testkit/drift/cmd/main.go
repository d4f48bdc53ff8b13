// Command drift holds Codex releases to rollout's vocabulary: `make drift
// VERSION=0.172.0` (or VERSIONS="..."). It installs each version into the
// shared cache, runs the live scenarios against the conformance mock,
// reads the binary's strings and prints what the release writes that
// rollout does not know; exit 1 when there is any, 2 on an error
// (docs/drift.md). -save keeps what each release wrote, -from checks that
// again without running Codex (after a vocabulary change).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/testkit/drift"
)

func main() {
	versions := flag.String("versions", "", "Codex versions, space or comma separated")
	verbose := flag.Bool("v", false, "list the known names too, with who reads them")
	save := flag.String("save", "", "write what each version wrote to DIR/VERSION.json")
	from := flag.String("from", "", "read what each version wrote from DIR/VERSION.json instead of running it")
	flag.Parse()
	vs := strings.FieldsFunc(*versions, func(r rune) bool { return r == ' ' || r == ',' })
	observe := func(ctx context.Context, v string) (*drift.Observed, error) {
		if *from != "" {
			b, err := os.ReadFile(filepath.Join(*from, v+".json"))
			if err != nil {
				return nil, err
			}
			o := drift.NewObserved(v)
			if err := json.Unmarshal(b, o); err != nil {
				return nil, err
			}
			// The binary is in the cache: its strings are read again, so
			// that a change of the extraction needs no new run.
			return o, o.StringsAgain(v)
		}
		o, err := drift.Observe(ctx, v)
		if err == nil && *save != "" {
			b, _ := json.MarshalIndent(o, "", " ")
			err = os.WriteFile(filepath.Join(*save, v+".json"), b, 0o644)
		}
		return o, err
	}
	code, err := drift.Run(context.Background(), vs, os.Stdout, drift.Known(), observe, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
