package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/load"
)

func newWatchCmd(f *composeFlags, s streams) *cobra.Command {
	var u upRun
	var noUp, quiet, prune bool
	cmd := &cobra.Command{
		Use:   "watch [SERVICE...]",
		Short: "Watch the build context for services and rebuild/refresh containers when files are updated",
		Long: "Bring the services up (unless --no-up), then act on their develop.watch rules until Ctrl-C: sync, " +
			"sync+restart and sync+exec copy changed files into every replica, restart restarts, rebuild builds and " +
			"redeploys. The services keep running afterwards.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var r load.Result
			var se *clientdeploy.Session
			var err error
			if noUp {
				if r, err = f.load(ctx, s); err == nil {
					se, err = openSession(ctx, s, f.server, r.Dir, f.progress)
				}
			} else {
				r, se, err = u.deploy(ctx, f, s, args, clientdeploy.HoldAgent, nil)
			}
			if se != nil {
				defer se.Close()
			}
			if err != nil {
				return composeFieldNames(err)
			}
			out := s.Err
			if quiet {
				out = io.Discard
			}
			return clientdeploy.Watch(ctx, se.Engine(), r.Project, clientdeploy.WatchOptions{
				Services: args, Out: out,
				Rebuild: func(ctx context.Context, services []string) error {
					rb := upRun{build: true}
					rb.o.NoDeps = true
					return rb.redeploy(ctx, f, s, se, services, clientdeploy.HoldAgent)
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&noUp, "no-up", false, "Do not build & start services before watching")
	fl.BoolVar(&quiet, "quiet", false, "Hide build output")
	fl.BoolVar(&prune, "prune", true, "Prune dangling images on rebuild (cornus: ignored)")
	return cmd
}
