package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
)

func newPullCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.PullOptions
	var quiet bool
	var policy string
	cmd := &cobra.Command{
		Use:   "pull [OPTIONS] [SERVICE...]",
		Short: "Pull service images",
		Long: "Pull the services' images into the backend's store (on a server, the server's). A service with a build section " +
			"that cannot be pulled is reported, not failed; on kubernetes the nodes pull when they run a pod.",
		RunE: func(cmd *cobra.Command, services []string) error {
			switch policy {
			case "", "always":
			case "missing":
				o.Missing = true
			default:
				return fmt.Errorf("--policy %q: want missing or always", policy)
			}
			ctx := cmd.Context()
			r, se, err := f.loadAndOpen(ctx, s, f.progressMode(quiet))
			if err != nil {
				return err
			}
			defer se.Close()
			o.Services = services
			return composeFieldNames(se.Engine().Pull(ctx, r.Project, o))
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.IgnoreBuildable, "ignore-buildable", false, "Ignore images that can be built")
	fl.BoolVar(&o.IgnoreFailures, "ignore-pull-failures", false, "Pull what it can and ignores images with pull failures")
	fl.BoolVar(&o.IncludeDeps, "include-deps", false, "Also pull services declared as dependencies")
	fl.StringVar(&policy, "policy", "", "Apply pull policy (\"missing\"|\"always\")")
	fl.BoolVarP(&quiet, "quiet", "q", false, "Pull without printing progress information")
	return cmd
}
