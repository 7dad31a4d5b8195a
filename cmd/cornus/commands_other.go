//go:build !linux

package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// hostCommands off Linux say they need it: the server, the Docker API
// proxy and the caretaker run where the containers do. The client
// reaches them with --server.
func hostCommands(streams) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range []struct {
		use, short string
	}{
		{"serve", "Serve the deploy API (needs Linux)"},
		{"token", "Manage a server's client tokens (needs Linux)"},
		{"daemon", "Serve the Docker Engine API over a backend (needs Linux)"},
		{"agent", "Build the caretaker image (needs Linux)"},
	} {
		out = append(out, &cobra.Command{
			Use: c.use, Short: c.short, DisableFlagParsing: true,
			RunE: func(*cobra.Command, []string) error {
				return fmt.Errorf("cornus %s runs on a Linux host, and this is %s: run it there, and reach it from here with --server URL (or CORNUS_SERVER)", c.use, runtime.GOOS)
			},
		})
	}
	return out
}
