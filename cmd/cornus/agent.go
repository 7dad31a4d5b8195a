package main

import (
	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
)

// newSessionAgentCmd is the hidden agent `up -d` starts: it opens
// project's session, prints its id, and holds it until the server ends it
// (clientdeploy.ServeAgent).
func newSessionAgentCmd(s streams) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:    "session-agent --server URL PROJECT",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clientdeploy.ServeAgent(cmd.Context(), s.deploy(), clientdeploy.ServerURL(server, s.Environ), args[0])
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server")
	return cmd
}
