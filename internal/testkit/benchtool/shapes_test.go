package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/checks"
)

// TestShapes generates small shapes twice and checks that they are
// deterministic and say what they claim: clean rollouts, the world-state
// pair of the same size, and fixes.jsonl with its missing ids.
func TestShapes(t *testing.T) {
	args := []string{"-fleet-files", "6", "-fleet-median", "60KB", "-fleet-max", "400KB", "-small-size", "200KB",
		"-patches", "300", "-ids", "2000", "-missing-ids", "300", "-long-line", "5MB",
		"-records-size", "300KB", "-tree-files", "5", "-tree-file-size", "20KB", "-few-fixes", "30"}
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := cmdShapesGen(append([]string{"-o", d}, args...)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(dir, name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, "shapes", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, name := range []string{shapeSmall, shapeRecords, shapeWorld, shapeWorldEvents, shapeIDs, shapeFixes, shapeFewFixes, shapeLong, shapeTreeOne} {
		if !bytes.Equal(read(a, name), read(b, name)) {
			t.Errorf("%s differs between two runs with the same options", name)
		}
	}
	if w, e := read(a, shapeWorld), read(a, shapeWorldEvents); len(w) != len(e) || bytes.Count(w, []byte(`"type":"world_state"`)) != 301 {
		t.Errorf("worldstate.jsonl: %d bytes, %d world_state lines; events variant %d bytes",
			len(w), bytes.Count(w, []byte(`"type":"world_state"`)), len(e))
	}
	paths, _, err := fleetFiles(filepath.Join(a, "shapes", shapeFleet))
	zst := slices.IndexFunc(paths, func(p string) bool { return strings.HasSuffix(p, ".zst") })
	if err != nil || len(paths) != 6 || zst < 0 {
		t.Fatalf("fleet: %v, %v", paths, err)
	}
	// Each fleet file ends close to its drawn size on disk (compressed for
	// a .zst), and is the same in both runs.
	spec := shapesSpec{Seed: 1, FleetFiles: 6, FleetMedian: 60e3, FleetMax: 400e3, FleetSigmaX100: 100}
	for i, size := range fleetSizes(spec) {
		_, name := fleetFile(spec, i, size)
		data := read(a, filepath.Join(shapeFleet, name))
		if got := int64(len(data)); got < size || got > size*13/10 {
			t.Errorf("fleet file %d: %d bytes on disk, drawn %d", i, got, size)
		}
		if !bytes.Equal(data, read(b, filepath.Join(shapeFleet, name))) {
			t.Errorf("fleet file %d differs between two runs with the same options", i)
		}
	}
	// tree.jsonl is tree/'s files one after the other.
	treePaths, _, err := fleetFiles(filepath.Join(a, "shapes", shapeTree))
	if err != nil || len(treePaths) != 5 {
		t.Fatalf("tree: %v, %v", treePaths, err)
	}
	var joined []byte
	for _, p := range treePaths {
		data, _ := os.ReadFile(p)
		if len(data) < 20e3 || len(data) > 26e3 {
			t.Errorf("%s: %d bytes, want about 20 KB", p, len(data))
		}
		joined = append(joined, data...)
	}
	if !bytes.Equal(joined, read(a, shapeTreeOne)) {
		t.Error("tree.jsonl is not the files of tree/ joined")
	}
	if recs := read(a, shapeRecords); bytes.Count(recs, []byte(`"type":"token_count"`)) < 100 || bytes.Count(recs, []byte(`"agent_reasoning_delta"`)) < 100 {
		t.Errorf("small-records.jsonl lacks token counts or reasoning deltas")
	}
	// The fleet's files come from internal/testkit/fixturegen/gen, whose own tests judge them;
	// here the .zst one must just read.
	if res, err := checks.Run(paths[zst], nil, checks.Options{}); err != nil || res.Records < 10 {
		t.Errorf("fleet file %s: %v", paths[zst], err)
	}
	for _, name := range []string{shapeSmall, shapeRecords, shapeWorld, shapeWorldEvents, shapeIDs, shapeFixes, shapeFewFixes, shapeLong} {
		res, err := checks.Run(filepath.Join(a, "shapes", name), nil, checks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		missing := 0
		for _, f := range res.Findings {
			if f.Rule == "item/missing-id" {
				missing++
			} else {
				t.Errorf("%s:%d: %s %s", name, f.Line, f.Rule, f.Message)
			}
		}
		if want := map[string]int{shapeFixes: 300, shapeFewFixes: 30, shapeLong: 1}[name]; missing != want {
			t.Errorf("%s: %d missing ids, want %d", name, missing, want)
		}
	}
}
