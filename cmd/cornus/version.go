package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/internal/buildinfo"
)

func newVersionCmd(s streams) *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show the cornus version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if short {
				fmt.Fprintln(s.Out, buildinfo.Version())
				return nil
			}
			fmt.Fprintf(s.Out, "cornus version %s\nGo: %s\nPlatform: %s\n", buildinfo.Version(), runtime.Version(), buildinfo.Platform())
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "Print only the version")
	return cmd
}
