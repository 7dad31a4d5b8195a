package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/load"
)

// upRun is what up and create share: the engine's options, the flags
// that change the loaded project, and the build policy.
type upRun struct {
	o              engine.UpOptions
	ov             compose.UpOverrides
	build, noBuild bool
	assumeYes      bool
	quietPull      bool
}

// flags adds the flags create and up both take, as docker compose names
// them.
func (u *upRun) flags(fl *pflag.FlagSet) {
	fl.BoolVar(&u.o.ForceRecreate, "force-recreate", false, "Recreate containers even if their configuration is unchanged")
	fl.BoolVar(&u.o.NoRecreate, "no-recreate", false, "If containers already exist, don't recreate them. Incompatible with --force-recreate.")
	fl.BoolVar(&u.o.RemoveOrphans, "remove-orphans", false, "Remove containers of services not defined in the Compose file")
	fl.BoolVar(&u.build, "build", false, "Build images before starting containers")
	fl.BoolVar(&u.noBuild, "no-build", false, "Don't build an image, even if it's missing")
	fl.StringArrayVar(&u.ov.Scale, "scale", nil, "Scale SERVICE to NUM instances (overrides the file's scale)")
	fl.StringVar(&u.ov.Pull, "pull", "", "Pull images before running: always, missing, never or build (default: each service's pull_policy)")
	fl.BoolVarP(&u.assumeYes, "yes", "y", false, "Assume yes to all prompts (cornus never prompts)")
	fl.BoolVar(&u.quietPull, "quiet-pull", false, "Pull without printing progress information (cornus prints one line per image)")
}

// deploy loads the project with up's changes, checks it with loaded
// (nil: none), opens the session and applies it; the caller closes the
// session.
func (u *upRun) deploy(ctx context.Context, f *composeFlags, s streams, services []string, hold clientdeploy.Hold, loaded func(load.Result) error) (load.Result, *clientdeploy.Session, error) {
	u.o.Services = services
	if err := u.o.Check(); err != nil {
		return load.Result{}, nil, err
	}
	r, err := f.loadModified(ctx, s, u.ov.Apply)
	if err != nil {
		return r, nil, err
	}
	if loaded != nil {
		if err := loaded(r); err != nil {
			return r, nil, err
		}
	}
	se, err := openSession(ctx, s, f.server, r.Dir, f.progress)
	if err != nil {
		return r, nil, err
	}
	return r, se, u.deployIn(ctx, s, se, r, hold)
}

// redeploy loads the project again and deploys the services in the open
// session se (watch's rebuild: a second session would wait for the
// first one's builder).
func (u *upRun) redeploy(ctx context.Context, f *composeFlags, s streams, se *clientdeploy.Session, services []string, hold clientdeploy.Hold) error {
	u.o.Services = services
	if err := u.o.Check(); err != nil {
		return err
	}
	r, err := f.loadModified(ctx, s, u.ov.Apply)
	if err != nil {
		return err
	}
	return u.deployIn(ctx, s, se, r, hold)
}

// deployIn deploys r's project in se as u says.
func (u *upRun) deployIn(ctx context.Context, s streams, se *clientdeploy.Session, r load.Result, hold clientdeploy.Hold) error {
	do := clientdeploy.Options{Up: u.o, BindsToLocal: true, Hold: hold}
	var err error
	if do.Build, err = buildPolicy(u.build, u.noBuild); err != nil {
		return err
	}
	res, err := se.Deploy(ctx, r.Project, do)
	if len(res.Orphans) > 0 && !u.o.RemoveOrphans {
		fmt.Fprintf(s.Err, "WARN found orphan containers (%s) for this project: if you removed or renamed their service, run up with --remove-orphans\n", containerNames(res.Orphans))
	}
	return err
}

func newCreateCmd(f *composeFlags, s streams) *cobra.Command {
	var u upRun
	cmd := &cobra.Command{
		Use:   "create [OPTIONS] [SERVICE...]",
		Short: "Creates containers for a service",
		Long:  "Create the project's networks, volumes and containers without starting them (up --no-start); start starts them.",
		RunE: func(cmd *cobra.Command, args []string) error {
			u.o.NoStart = true
			_, se, err := u.deploy(cmd.Context(), f, s, args, clientdeploy.HoldAgent, nil)
			if se != nil {
				defer se.Close()
			}
			return composeFieldNames(err)
		},
	}
	u.flags(cmd.Flags())
	return cmd
}

func newUpCmd(f *composeFlags, s streams) *cobra.Command {
	var u upRun
	var fg foregroundFlags
	var detach bool
	var waitTimeout int
	cmd := &cobra.Command{
		Use:   "up [OPTIONS] [SERVICE...]",
		Short: "Create and start containers",
		Long: "Create and start the project's containers. Host bind mounts are allowed under the project directory " +
			"(and CORNUS_ALLOW_BIND_SOURCES); privileged containers need CORNUS_ALLOW_PRIVILEGED=1.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fg.check(detach); err != nil {
				return err
			}
			ctx, cancel := waitDeadline(cmd.Context(), u.o.Wait, waitTimeout)
			defer cancel()
			hold := clientdeploy.HoldForeground
			if detach {
				hold = clientdeploy.HoldAgent
			}
			var fo foregroundOptions
			r, se, err := u.deploy(ctx, f, s, args, hold, func(r load.Result) (err error) {
				fo, err = fg.options(r.Project, args, u.o.NoDeps, isTerminal(s.Out))
				return err
			})
			if se != nil {
				defer se.Close()
			}
			// From here on the foreground handles Ctrl-C itself: the first
			// stops gracefully, a second one kills.
			bg := context.WithoutCancel(ctx)
			if err != nil {
				// Interrupted while waiting for another cornus: nothing was
				// started, and what runs is the other one's.
				var locked *engine.LockedError
				if se != nil && ctx.Err() != nil && !detach && !errors.As(err, &locked) {
					fmt.Fprintln(s.Err, "Interrupted: stopping what was started...")
					_ = se.Engine().Stop(bg, r.Project.Name, engine.LifecycleOptions{Services: args})
				}
				return composeFieldNames(err)
			}
			if detach {
				return nil
			}
			return foreground(bg, s, se, r.Project, args, fo)
		},
	}
	fl := cmd.Flags()
	u.flags(fl)
	fg.flags(fl)
	fl.BoolVarP(&detach, "detach", "d", false, "Run containers in the background")
	fl.BoolVar(&u.o.Wait, "wait", false, "Wait for services to be running and healthy (implies -d)")
	fl.BoolVar(&u.o.NoDeps, "no-deps", false, "Don't start linked services")
	fl.BoolVar(&u.o.NoStart, "no-start", false, "Don't start the services after creating them")
	fl.BoolVar(&u.o.AlwaysRecreateDeps, "always-recreate-deps", false, "Recreate dependent containers. Incompatible with --no-recreate.")
	fl.BoolVarP(&u.o.RenewAnonVolumes, "renew-anon-volumes", "V", false, "Recreate anonymous volumes instead of retrieving data from the previous containers")
	fl.IntVar(&waitTimeout, "wait-timeout", 0, "Maximum duration in seconds to wait for the project to be running and healthy (with --wait)")
	cmd.PreRun = func(*cobra.Command, []string) {
		if u.o.Wait || u.o.NoStart {
			detach = true // nothing to follow
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
