// Package repairgen writes the rollouts docs/repair.md repairs, taken from
// the repair fixtures (fixtures/repair/*.txtar, the inputs whose repaired
// bytes the fixture test pins), so that the page's sessions can be run.
package repairgen

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// DocInputs are the page's files, by the fixture each is the input of.
var DocInputs = map[string]string{
	"crashed.jsonl":       "line-torn-tail.txtar",
	"rollout.jsonl":       "combined.paginated.txtar",
	"compacted.jsonl":     "item-missing-id.compacted.txtar",
	"interrupted.jsonl":   "tool-orphan-call.txtar",
	"orphan-output.jsonl": "tool-orphan-output.txtar",
}

// WriteDocInputs writes each of DocInputs into dir (made if needed).
func WriteDocInputs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, fixture := range DocInputs {
		b, err := Input(filepath.Join(fixturesDir(), fixture))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Input is a repair fixture's rollout.jsonl, without its final newline when
// the fixture says no-final-newline for it (as the fixture test reads it).
func Input(path string) ([]byte, error) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		return nil, err
	}
	trim := false
	for _, l := range strings.Split(string(ar.Comment), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "no-final-newline" {
			for _, s := range f[1:] {
				trim = trim || s == "rollout.jsonl"
			}
		}
	}
	for _, f := range ar.Files {
		if f.Name == "rollout.jsonl" {
			if trim {
				return []byte(strings.TrimSuffix(string(f.Data), "\n")), nil
			}
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("%s: no rollout.jsonl section", path)
}

// fixturesDir is fixtures/repair of this source tree: the generator is run
// from a checkout (go run, go test), never installed.
func fixturesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "fixtures", "repair")
}
