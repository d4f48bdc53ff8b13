package main

import (
	"fmt"

	"github.com/rollout-dev/rollout/cmd/rollout/internal/report"
	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version and the report schema version",
		Example: "  rollout version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(a.io.Out, "rollout %s (report schema %d)\n", version(), report.SchemaVersion)
			return err
		},
	}
}
