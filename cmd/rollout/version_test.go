package main

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
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
