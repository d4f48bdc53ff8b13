package buildinfo

import (
	"runtime/debug"
	"slices"
	"testing"
)

// The build info's VCS settings become the commit and its time.
func TestCommit(t *testing.T) {
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
		if got := commit(tt.settings); !slices.Equal(got, tt.want) {
			t.Errorf("commit(%v) = %q, want %q", tt.settings, got, tt.want)
		}
	}
}

// A test binary is no tagged module: the version of a checkout.
func TestVersion(t *testing.T) {
	if v := Version(); v != "0.1.0" {
		t.Errorf("Version() = %q in a test binary, want 0.1.0", v)
	}
}
