package home_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// The attached-thread edges of the home Codex 0.171.0 made with a side
// conversation; none in a home without one, or without an index.
func TestAttachedEdges(t *testing.T) {
	for _, tt := range []struct {
		base string
		want map[string]string
	}{
		{homegen.Attached, map[string]string{homegen.AttachedChild: homegen.AttachedParent}},
		{homegen.Base, map[string]string{}},
		{"", map[string]string{}},
	} {
		dir := filepath.Join(t.TempDir(), "codex-home")
		if tt.base != "" {
			if err := homegen.Build(dir, tt.base); err != nil {
				t.Fatal(err)
			}
		}
		if got := home.New(dir).AttachedEdges(); !cmp.Equal(tt.want, got) {
			t.Errorf("%q: AttachedEdges = %v, want %v", tt.base, got, tt.want)
		}
	}
}
