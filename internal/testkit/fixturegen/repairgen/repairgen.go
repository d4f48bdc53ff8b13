// Package repairgen writes the rollouts docs/repair.md repairs, taken from
// the repair fixtures (fixtures/repair/*.txtar, the inputs whose repaired
// bytes the fixture test pins), so that the page's sessions can be run.
package repairgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
)

// DocInputs are the page's files, by the fixture each is the input of.
var DocInputs = map[string]string{
	"crashed.jsonl":       "line-torn-tail.txtar",
	"rollout.jsonl":       "combined.paginated.txtar",
	"compacted.jsonl":     "item-missing-id.compacted.txtar",
	"interrupted.jsonl":   "tool-orphan-call.txtar",
	"orphan-output.jsonl": "tool-orphan-output.txtar",
}

// WriteDocInputs writes each of DocInputs into dir (made if needed), and
// rollout.jsonl.zst: a generated rollout of 2 MiB (fixturegen/gen, seed 1)
// compressed and cut at CutAt bytes, as an interrupted copy leaves it.
func WriteDocInputs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeCutZstd(filepath.Join(dir, "rollout.jsonl.zst")); err != nil {
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

// CutAt is where the docs' compressed copy is cut.
const CutAt = 30000

func writeCutZstd(path string) error {
	var plain bytes.Buffer
	if _, err := gen.Write(&plain, gen.Options{Seed: 1, TargetBytes: 2 << 20}); err != nil {
		return err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	z := enc.EncodeAll(plain.Bytes(), nil)
	if len(z) <= CutAt {
		return fmt.Errorf("the compressed copy is %d bytes, not more than the cut at %d", len(z), CutAt)
	}
	return os.WriteFile(path, z[:CutAt], 0o644)
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
