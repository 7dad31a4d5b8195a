package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/engine"
)

func newUpCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.UpOptions
	var ov compose.UpOverrides
	var detach, build, noBuild, assumeYes, quietPull bool
	var waitTimeout int
	cmd := &cobra.Command{
		Use:   "up [OPTIONS] [SERVICE...]",
		Short: "Create and start containers",
		Long: "Create and start the project's containers. Host bind mounts are allowed under the project directory " +
			"(and CORNUS_ALLOW_BIND_SOURCES); privileged containers need CORNUS_ALLOW_PRIVILEGED=1.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := f.loadModified(ctx, s, ov.Apply)
			if err != nil {
				return err
			}
			ctx, cancel := waitDeadline(ctx, o.Wait, waitTimeout)
			defer cancel()
			se, err := openSession(ctx, s, f.server, r.Dir, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			o.Services = args
			hold := clientdeploy.HoldForeground
			if detach {
				hold = clientdeploy.HoldAgent
			}
			do := clientdeploy.Options{Up: o, BindsToLocal: true, Hold: hold}
			if do.Build, err = buildPolicy(build, noBuild); err != nil {
				return err
			}
			res, err := se.Deploy(ctx, r.Project, do)
			if len(res.Orphans) > 0 && !o.RemoveOrphans {
				fmt.Fprintf(s.Err, "WARN found orphan containers (%s) for this project: if you removed or renamed their service, run up with --remove-orphans\n", containerNames(res.Orphans))
			}
			// From here on the foreground handles Ctrl-C itself: the first
			// stops gracefully, a second one kills.
			bg := context.WithoutCancel(ctx)
			if err != nil {
				// Interrupted while waiting for another cornus: nothing was
				// started, and what runs is the other one's.
				var locked *engine.LockedError
				if ctx.Err() != nil && !detach && !errors.As(err, &locked) {
					fmt.Fprintln(s.Err, "Interrupted: stopping what was started...")
					_ = se.Engine().Stop(bg, r.Project.Name, engine.LifecycleOptions{Services: o.Services})
				}
				return composeFieldNames(err)
			}
			if detach {
				return nil
			}
			return foreground(bg, s, se, r.Project.Name, o.Services)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&detach, "detach", "d", false, "Run containers in the background")
	fl.BoolVar(&o.Wait, "wait", false, "Wait for services to be running and healthy (implies -d)")
	fl.BoolVar(&o.ForceRecreate, "force-recreate", false, "Recreate containers even if their configuration is unchanged")
	fl.BoolVar(&o.NoDeps, "no-deps", false, "Don't start linked services")
	fl.BoolVar(&o.RemoveOrphans, "remove-orphans", false, "Remove containers of services not defined in the Compose file")
	fl.BoolVar(&build, "build", false, "Build images before starting containers")
	fl.BoolVar(&noBuild, "no-build", false, "Don't build an image, even if it's missing")
	fl.StringArrayVar(&ov.Scale, "scale", nil, "Scale SERVICE to NUM instances (overrides the file's scale)")
	fl.StringVar(&ov.Pull, "pull", "", "Pull images before running: always, missing, never or build (default: each service's pull_policy)")
	fl.IntVar(&waitTimeout, "wait-timeout", 0, "Maximum duration in seconds to wait for the project to be running and healthy (with --wait)")
	fl.BoolVarP(&assumeYes, "yes", "y", false, "Assume yes to all prompts (cornus never prompts)")
	fl.BoolVar(&quietPull, "quiet-pull", false, "Pull without printing progress information (cornus prints one line per image)")
	cmd.PreRun = func(*cobra.Command, []string) {
		if o.Wait {
			detach = true
		}
	}
	return cmd
}

// waitDeadline bounds an up --wait by --wait-timeout (seconds; 0: none).
func waitDeadline(ctx context.Context, wait bool, seconds int) (context.Context, context.CancelFunc) {
	if !wait || seconds <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
}

// buildPolicy is what up's --build and --no-build ask for.
func buildPolicy(build, noBuild bool) (clientdeploy.BuildPolicy, error) {
	switch {
	case build && noBuild:
		return 0, errors.New("--build and --no-build are incompatible")
	case build:
		return clientdeploy.BuildAlways, nil
	case noBuild:
		return clientdeploy.BuildNever, nil
	}
	return clientdeploy.BuildMissing, nil
}

// foreground streams the containers' output until they all exit or the
// user presses Ctrl-C, then stops them (a second Ctrl-C kills them).
func foreground(ctx context.Context, s streams, se *clientdeploy.Session, project string, services []string) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	attachCtx, stopAttach := context.WithCancel(ctx)
	go func() {
		select {
		case <-sigs:
			stopAttach()
		case <-attachCtx.Done():
		}
	}()
	err := se.Engine().Attach(attachCtx, project, engine.AttachOptions{Services: services, Out: s.Out, Color: isTerminal(s.Out)})
	interrupted := attachCtx.Err() != nil
	stopAttach()
	if err != nil || !interrupted {
		return err
	}
	fmt.Fprintln(s.Err, "Gracefully stopping... (press Ctrl+C again to force)")
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-stopCtx.Done():
		}
	}()
	err = se.Engine().Stop(stopCtx, project, engine.LifecycleOptions{Services: services})
	if stopCtx.Err() != nil {
		return se.Engine().Kill(ctx, project, engine.LifecycleOptions{Services: services})
	}
	return err
}
