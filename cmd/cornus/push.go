package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/registryauth"
	"github.com/cornus-dev/cornus/spec"
)

func newPushCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.PushOptions
	var quiet bool
	cmd := &cobra.Command{
		Use:   "push [OPTIONS] [SERVICE...]",
		Short: "Push service images",
		Long: "Push the images of the services that are built and named (build and image) to their registries, with this " +
			"machine's logins (docker login's config.json and credential helpers); through a server, from the server's store, " +
			"with the logins sent along for that push alone.",
		RunE: func(cmd *cobra.Command, services []string) error {
			ctx := cmd.Context()
			r, se, err := f.loadAndOpen(ctx, s, f.progressMode(quiet))
			if err != nil {
				return err
			}
			defer se.Close()
			o.Services = services
			o.Auth = func(ctx context.Context, host string) (spec.RegistryAuth, error) {
				return registryauth.Lookup(ctx, s.Environ, host)
			}
			return composeFieldNames(se.Engine().Push(ctx, r.Project, o))
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.IgnoreFailures, "ignore-push-failures", false, "Push what it can and ignores images with push failures")
	fl.BoolVar(&o.IncludeDeps, "include-deps", false, "Also push images of services declared as dependencies")
	fl.BoolVarP(&quiet, "quiet", "q", false, "Push without printing progress information")
	return cmd
}
