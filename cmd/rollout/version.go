package main

import (
	"fmt"
	"io"
	"path"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/base/buildinfo"
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/reconstruct"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and the version of every JSON schema (--version: the first two lines)",
		Example: "  rollout version\n  rollout --version",
		Args:    argsBetween(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := io.WriteString(a.io.Out, versionText())
			return err
		},
	}
}

// version is the module version every JSON header carries.
func version() string { return schema.ToolVersion() }

// versionText is what `rollout version` prints: the two lines of
// --version, then the tables of JSON schemas (schema.Outputs) and Parquet
// tables.
func versionText() string {
	var b strings.Builder
	b.WriteString(versionLine() + "\n")
	b.WriteString(checkedLine() + "\n")
	b.WriteString("JSON schemas (docs/schema/):\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, o := range schema.Outputs() {
		fmt.Fprintf(tw, "  %s\tv%d\t%s\t%s\n", o.Name, o.Version, o.Command, path.Base(schema.File(o.Name)))
	}
	tw.Flush()
	b.WriteString("Parquet tables (--format parquet=DIR, docs/schema/):\n")
	for _, o := range schema.ParquetTables() {
		fmt.Fprintf(tw, "  %s\tv%d\t%s\t%s\n", o.Name, o.Version, o.Command, path.Base(schema.ParquetFile(o.Name)))
	}
	tw.Flush()
	return b.String()
}

// checkedLine is the range of Codex versions the rules and the replay
// were checked against (reconstruct.CheckedOldest, CheckedNewest): a file
// of a later minor is meta/unchecked-version.
func checkedLine() string {
	n := reconstruct.CheckedNewest
	return fmt.Sprintf("Codex versions checked: %s to %d.%d.x (newer: meta/unchecked-version)", reconstruct.CheckedOldest, n.Major, n.Minor)
}

// versionLine is the first line of versionText: the module version, then
// what the Go toolchain stamped into the binary (the VCS commit and its
// time, and whether the tree had local changes), then the verify report's
// schema version.
func versionLine() string {
	parts := buildinfo.Commit()
	if len(parts) == 0 {
		parts = append(parts, "commit unknown")
	}
	parts = append(parts, fmt.Sprintf("report schema %d", schema.Version(schema.VerifyReport)))
	return fmt.Sprintf("rollout %s (%s)", version(), strings.Join(parts, ", "))
}
