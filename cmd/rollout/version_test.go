package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/reconstruct"
)

// The build info's VCS settings become the commit and its time.
func TestBuildParts(t *testing.T) {
	tests := []struct {
		settings []debug.BuildSetting
		want     []string
	}{
		{nil, nil},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "97581327b78e6306485d92a8892b82fbc97e1295"},
			{Key: "vcs.time", Value: "2026-11-30T14:12:53Z"}, {Key: "vcs.modified", Value: "false"}},
			[]string{"commit 97581327b78e", "committed 2026-11-30T14:12:53Z"}},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}},
			[]string{"commit abc+dirty"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, buildParts(tt.settings)); diff != "" {
			t.Errorf("buildParts(%v) (-want +got):\n%s", tt.settings, diff)
		}
	}
}

// The version text names the checked range of Codex versions, the one
// quirks.go holds to the conformance goldens.
func TestVersionTextChecked(t *testing.T) {
	got := versionText()
	n := reconstruct.CheckedNewest
	want := fmt.Sprintf("\nCodex versions checked: %s to %d.%d.x (newer: meta/unchecked-version)\n", reconstruct.CheckedOldest, n.Major, n.Minor)
	if !strings.Contains(got, want) || !regexp.MustCompile(`\nCodex versions checked: 0\.\d+\.0 to 0\.\d+\.x `).MatchString(got) {
		t.Errorf("versionText() = %q, want it to contain %q", got, want)
	}
}
