package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/engine"
)

func newBuildCmd(f *composeFlags, s streams) *cobra.Command {
	var args []string
	var o clientdeploy.BuildOptions
	var quiet, withDeps bool
	cmd := &cobra.Command{
		Use:   "build [OPTIONS] [SERVICE...]",
		Short: "Build or rebuild services",
		Long: "Build the images of services with a build section, with BuildKit, where the backend keeps images " +
			"(dockerd's or podman's builder, else a buildkitd cornus runs). Privileged builds and the host's network need CORNUS_ALLOW_PRIVILEGED=1.",
		RunE: func(cmd *cobra.Command, services []string) error {
			ctx := cmd.Context()
			r, se, err := f.loadAndOpen(ctx, s, f.progressMode(quiet))
			if err != nil {
				return err
			}
			defer se.Close()
			if withDeps && len(services) > 0 {
				if services, err = engine.Selected(r.Project, services, false); err != nil {
					return err
				}
			}
			o.Args = buildArgs(args, s.Environ)
			_, err = se.Build(ctx, r.Project, services, o)
			return composeFieldNames(err)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&args, "build-arg", nil, "Set build-time variables (KEY=VALUE, or KEY to take it from the environment)")
	fl.BoolVar(&o.NoCache, "no-cache", false, "Do not use cache when building the image")
	fl.BoolVar(&o.Pull, "pull", false, "Always attempt to pull a newer version of the image")
	fl.BoolVarP(&quiet, "quiet", "q", false, "Don't print anything to STDOUT")
	fl.BoolVar(&withDeps, "with-dependencies", false, "Also build dependencies (transitively)")
	return cmd
}

// buildArgs reads --build-arg values: KEY=VALUE, or KEY for the value in
// the environment (left out when unset, as docker compose does).
func buildArgs(args []string, environ []string) map[string]string {
	if len(args) == 0 {
		return nil
	}
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	out := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			if v, ok = env[k]; !ok {
				continue
			}
		}
		out[k] = v
	}
	return out
}
