package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/bare"
	"github.com/cornus-dev/cornus/backends/containerd"
	"github.com/cornus-dev/cornus/backends/incus"
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
			case bare.Name:
				return bare.RunMonitor(ctx, s.Environ, args[1])
			case incus.Name: // a container's init, inside it
				return incus.RunInit(ctx, args[1])
			case incus.HelperName: // exec and copy, inside a container
				if code := incus.RunHelper(args[1], s.In, s.Out, s.Err); code != 0 {
					return exitError{code}
				}
				return nil
			}
			return fmt.Errorf("monitor: no monitor for backend %q", args[0])
		},
	}
}
