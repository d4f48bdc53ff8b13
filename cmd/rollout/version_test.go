package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

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
