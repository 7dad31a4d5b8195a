package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/engine"
)

func newScaleCmd(f *composeFlags, s streams) *cobra.Command {
	var noDeps bool
	cmd := &cobra.Command{
		Use:   "scale [SERVICE=REPLICAS...]",
		Short: "Scale services",
		Long:  "Scale services to the given replicas, as up -d --scale SERVICE=N SERVICE does: the rest of the project is left as it is.",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := f.loadModified(ctx, s, compose.UpOverrides{Scale: args}.Apply)
			if err != nil {
				return err
			}
			se, err := openSession(ctx, s, f.server, r.Dir, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			var services []string
			for _, a := range args {
				name, _, _ := strings.Cut(a, "=")
				services = append(services, name)
			}
			do := clientdeploy.Options{Up: engine.UpOptions{Services: services, NoDeps: noDeps}, BindsToLocal: true, Hold: clientdeploy.HoldAgent}
			_, err = se.Deploy(ctx, r.Project, do)
			return composeFieldNames(err)
		},
	}
	cmd.Flags().BoolVar(&noDeps, "no-deps", false, "Don't start linked services")
	return cmd
}
