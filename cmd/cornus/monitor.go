package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/containerd"
)

// newMonitorCmd is the hidden per-container monitor a daemonless backend
// spawns (detached) to supervise one container.
func newMonitorCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "monitor BACKEND ID",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			switch args[0] {
			case containerd.Name:
				return containerd.RunMonitor(ctx, s.Environ, args[1])
			}
			return fmt.Errorf("monitor: no monitor for backend %q", args[0])
		},
	}
}
