// Package repocheck holds tests about the repository itself rather than
// about one package: that the Makefile's fuzz target runs every fuzz test,
// and that the tree keeps its layout (layout_test.go): the design card's
// top level, no import against the flow, cmd/ as wiring, files a reader
// takes in whole.
// It is a test harness (internal/testkit) with no code but its tests.
package repocheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryTarget: `make fuzz` ran 4 of the 7 fuzz targets
// (issue 11); every `func FuzzX` must have its line.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	lineRE := regexp.MustCompile(`-fuzz='\^(Fuzz\w+)\$\$' .* (\./\S+)`)
	var inMake []string
	for _, m := range lineRE.FindAllStringSubmatch(string(mk), -1) {
		inMake = append(inMake, m[2]+" "+m[1])
	}
	funcRE := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	var inCode []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, m := range funcRE.FindAllStringSubmatch(string(b), -1) {
			inCode = append(inCode, "./"+filepath.ToSlash(rel)+" "+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(inMake)
	slices.Sort(inCode)
	if len(inCode) == 0 {
		t.Fatal("found no fuzz targets: the walk is wrong")
	}
	if !slices.Equal(inMake, inCode) {
		t.Errorf("make fuzz runs\n  %s\nthe fuzz targets are\n  %s", strings.Join(inMake, "\n  "), strings.Join(inCode, "\n  "))
	}
}
