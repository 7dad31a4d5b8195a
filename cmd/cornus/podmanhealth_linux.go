package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/podman"
)

// newPodmanHealthCmd is the hidden healthcheck driver the podman backend
// spawns (detached) for one container, where podman cannot schedule
// healthchecks itself (no systemd).
func newPodmanHealthCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    podman.DriverCommand[0] + " ID",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return podman.RunHealthDriver(ctx, s.Environ, args[0])
		},
	}
}
