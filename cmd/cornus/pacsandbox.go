package main

import (
	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/egress/sandbox"
)

// newPACSandboxCmd is the child cornus serve runs tenants' PAC scripts in
// (hidden: the server starts it, speaking JSON lines on its stdin and
// stdout).
func newPACSandboxCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    sandbox.Subcommand,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sandbox.Main(cmd.Context(), s.Environ)
		},
	}
}
