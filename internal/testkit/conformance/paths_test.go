package conformance

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestHarnessPaths: only a rollout-conformance-* directory right below the
// harness's temporary root is taken for a case directory Resume may make
// again (and remove); any other cwd a rollout names is left alone.
func TestHarnessPaths(t *testing.T) {
	meta := func(cwd string) []byte {
		return []byte(`{"timestamp":"2026-12-01T00:00:00.000Z","type":"session_meta","payload":{"id":"x","cwd":"` + cwd + `"}}` + "\n")
	}
	root := TempRoot()
	for _, tc := range []struct{ cwd, want string }{
		{filepath.Join(root, "rollout-conformance-123", "gen", "work"), filepath.Join(root, "rollout-conformance-123")},
		{filepath.Join(root, "rollout-conformance-123", "..", "..", "etc", "work"), ""},
		{filepath.Join(root, "other", "rollout-conformance-1", "work"), ""},
		{"/etc/rollout-conformance-1/gen/work", ""},
		{"rollout-conformance-1/gen/work", ""},
		{"", ""},
	} {
		got := ""
		if cwd := sessionCwd(meta(tc.cwd)); cwd != "" {
			got = harnessRoot(cwd)
		}
		if got != tc.want {
			t.Errorf("cwd %q: harness root %q, want %q", tc.cwd, got, tc.want)
		}
	}
}

// TestGoldenPathsAreHarnessPaths: the absolute paths Codex wrote into the
// committed goldens are those of the harness's case directories,
// /tmp/rollout-conformance-N/..., and nothing of the machine that made
// them (a home, a checkout, a per-user temporary directory). No test reads
// them; they stay as Codex wrote them (README.md, Goldens).
func TestGoldenPathsAreHarnessPaths(t *testing.T) {
	harness := regexp.MustCompile(`^/tmp/rollout-conformance-[0-9]+/`)
	n := 0
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(b), "\n")
		cwd := gjson.Get(first, "payload.cwd").String()
		if cwd == "" {
			cwd = gjson.Get(first, "cwd").String() // the bare era
		}
		if cwd == "" {
			return nil
		}
		n++
		if !harness.MatchString(cwd) {
			t.Errorf("%s: session_meta.cwd %q is not a harness case directory", p, cwd)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no golden rollout names a cwd: the test checks nothing")
	}
}
