package result

import (
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/base/shard"
)

// Merge takes only the shards of one run: every refusal names the reports.
func TestMergeRefuses(t *testing.T) {
	settings := func() *Settings {
		return &Settings{Select: []string{}, Ignore: []string{}, PerPathIgnores: map[string][]string{}, ShowSeverity: "info"}
	}
	rep := func(k, n int, paths ...string) *Report {
		r := &Report{Tool: "rollout", Version: "1", Command: "verify", Settings: settings(), Shard: &shard.Spec{K: k, N: n}}
		for _, p := range paths {
			r.Files = append(r.Files, FileResult{Path: p})
		}
		return r
	}
	names := []string{"a.json", "b.json"}
	got, err := Merge([]*Report{rep(2, 2, "y"), rep(1, 2, "x")}, names)
	if err != nil || len(got.Files) != 2 || got.Files[0].Path != "x" || got.Shard != nil || got.Settings == nil {
		t.Fatalf("Merge of two shards: %+v, %v", got, err)
	}

	other := rep(2, 2, "y")
	other.Settings.Ignore = []string{"line/"}
	noSettings := rep(2, 2, "y")
	noSettings.Settings = nil
	for _, c := range []struct {
		reps []*Report
		want string
	}{
		{[]*Report{rep(1, 2, "x"), rep(2, 2, "x")}, "x is in both a.json and b.json"},
		{[]*Report{rep(1, 2, "x"), other}, `different settings (ignore [] and ["line/"])`},
		{[]*Report{rep(1, 2, "x"), noSettings}, "b.json records no settings"},
		{[]*Report{rep(1, 2, "x"), rep(1, 2, "y")}, "a.json and b.json are both shard 1/2"},
	} {
		if _, err := Merge(c.reps, names); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
