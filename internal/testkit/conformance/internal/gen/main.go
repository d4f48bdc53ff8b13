// Command gen regenerates the conformance goldens with real Codex versions
// (make conformance VERSIONS="0.58.0 0.171.0"), installing each with npm
// into the cache (conformance.CacheDir) when it is not there.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

func main() {
	versions := flag.String("versions", strings.Join(conformance.Versions, " "), "Codex versions, space or comma separated")
	scenarios := flag.String("scenarios", "", "scenario names (default: all)")
	corruptions := flag.String("corruptions", "", "with -scenarios corrupt: the corruption names (default: all)")
	out := flag.String("out", conformance.GoldenDir, "golden directory")
	installOnly := flag.Bool("install", false, "only install the versions into the cache (.ci/run does, so that make test's live tests find them)")
	flag.Parse()
	ctx := context.Background()
	want := map[string]bool{}
	for _, s := range strings.FieldsFunc(*scenarios, sep) {
		want[s] = true
	}
	failed := 0
	for _, v := range strings.FieldsFunc(*versions, sep) {
		c, err := conformance.Install(ctx, v)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed++
			continue
		}
		if *installOnly {
			fmt.Printf("Codex %s: %s\n", v, c.Bin)
			continue
		}
		for _, sc := range conformance.Scenarios {
			if (len(want) > 0 && !want[sc.Name]) || !sc.RunsOn(v) {
				continue
			}
			work, err := conformance.NewCaseDir()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			g, err := conformance.WriteGolden(ctx, c, sc, work, *out)
			os.RemoveAll(work)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed++
				continue
			}
			fmt.Printf("%s %s: resume exit %d, %d items rebuilt (%s)\n", v, sc.Name, g.Oracle.ExitCode, len(g.Oracle.Rebuilt), g.Oracle.Split)
		}
		if len(want) == 0 || want["corrupt"] {
			if err := conformance.WriteCorruptions(ctx, c, *out, strings.FieldsFunc(*corruptions, sep)...); err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed++
			}
		}
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "%d failures\n", failed)
		os.Exit(1)
	}
	_ = filepath.Join
}

func sep(r rune) bool { return r == ' ' || r == ',' }
