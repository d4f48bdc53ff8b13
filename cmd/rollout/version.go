package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/rollout-dev/rollout/report"
	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and report schema version (same as --version)",
		Example: "  rollout version\n  rollout --version",
		Args:    argsExactly(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(a.io.Out, versionLine())
			return err
		},
	}
}

// version is the module version: the tag `go install` built, or 0.1.0 for
// a build from a checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0"
}

// versionLine is what `rollout version` and `rollout --version` print: the
// module version, then what the Go toolchain stamped into the binary (the
// VCS commit and its time, and whether the tree had local changes), then
// the report schema version.
func versionLine() string {
	var parts []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		parts = append(parts, buildParts(bi.Settings)...)
	}
	if len(parts) == 0 {
		parts = append(parts, "commit unknown")
	}
	parts = append(parts, fmt.Sprintf("report schema %d", report.SchemaVersion))
	return fmt.Sprintf("rollout %s (%s)", version(), strings.Join(parts, ", "))
}

func buildParts(settings []debug.BuildSetting) []string {
	s := map[string]string{}
	for _, kv := range settings {
		s[kv.Key] = kv.Value
	}
	var parts []string
	if rev := s["vcs.revision"]; rev != "" {
		commit := "commit " + rev[:min(len(rev), 12)]
		if s["vcs.modified"] == "true" {
			commit += "+dirty"
		}
		parts = append(parts, commit)
	}
	if t := s["vcs.time"]; t != "" {
		parts = append(parts, "committed "+t)
	}
	return parts
}
