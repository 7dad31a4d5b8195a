package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
)

func newDownCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.DownOptions
	var timeout int
	cmd := &cobra.Command{
		Use:   "down [OPTIONS]",
		Short: "Stop and remove containers and networks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, false, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			se.NoteEmpty(ctx, s.Err, t.name)
			o.Spec = t.spec
			if cmd.Flags().Changed("timeout") {
				d := time.Duration(timeout) * time.Second
				o.Timeout = &d
			}
			return se.Engine().Down(ctx, t.name, o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Volumes, "volumes", "v", false, "Remove named volumes declared in the project")
	fl.BoolVar(&o.RemoveOrphans, "remove-orphans", false, "Remove containers of services not defined in the Compose file")
	fl.IntVarP(&timeout, "timeout", "t", 0, "Seconds to wait for each container to stop (default: its stop_grace_period, 10s)")
	return cmd
}
