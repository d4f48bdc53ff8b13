package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLive runs the harness against real Codex versions now, with
// ROLLOUT_CONFORMANCE_VERSIONS="0.171.0 0.58.0" (installed with npm into
// CacheDir when missing), and judges the engine as TestGoldens and
// TestCorruptions do, on freshly generated cases written to a temporary
// directory (the committed goldens are left alone: make conformance
// rewrites them).
func TestLive(t *testing.T) {
	versions := strings.Fields(strings.ReplaceAll(os.Getenv("ROLLOUT_CONFORMANCE_VERSIONS"), ",", " "))
	if len(versions) == 0 {
		t.Skip("set ROLLOUT_CONFORMANCE_VERSIONS to run the live harness")
	}
	ctx := context.Background()
	root := t.TempDir()
	// "place" steps start from committed goldens of older versions.
	if err := os.CopyFS(filepath.Join(root, "0.125.0"), os.DirFS(filepath.Join("testdata", "0.125.0"))); err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		c, err := Install(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range Scenarios {
			if !sc.RunsOn(v) {
				continue
			}
			// A harness directory (rollout-conformance-*), as make
			// conformance uses: the oracle resumes at the same paths.
			work, err := NewCaseDir()
			if err != nil {
				t.Fatal(err)
			}
			_, err = WriteGolden(ctx, c, sc, work, root)
			os.RemoveAll(work)
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteCorruptions(ctx, c, root); err != nil {
			t.Fatal(err)
		}
	}
	checkGoldens(t, root)
	checkCorruptions(t, root)
}
