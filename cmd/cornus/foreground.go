package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// foregroundFlags are up's flags for what it follows in the foreground.
type foregroundFlags struct {
	abort        bool
	exitCodeFrom string
	attach       []string
	noAttach     []string
	attachDeps   bool
	timestamps   bool
	noLogPrefix  bool
	noColor      bool
}

func (f *foregroundFlags) flags(fl *pflag.FlagSet) {
	fl.BoolVar(&f.abort, "abort-on-container-exit", false, "Stops all containers if any container was stopped. Incompatible with -d")
	fl.StringVar(&f.exitCodeFrom, "exit-code-from", "", "Return the exit code of the selected service container. Implies --abort-on-container-exit")
	fl.StringArrayVar(&f.attach, "attach", nil, "Restrict attaching to the specified services. Incompatible with --attach-dependencies.")
	fl.StringArrayVar(&f.noAttach, "no-attach", nil, "Do not attach (stream logs) to the specified services")
	fl.BoolVar(&f.attachDeps, "attach-dependencies", false, "Automatically attach to log output of dependent services")
	fl.BoolVar(&f.timestamps, "timestamps", false, "Show timestamps")
	fl.BoolVar(&f.noLogPrefix, "no-log-prefix", false, "Don't print prefix in logs")
	fl.BoolVar(&f.noColor, "no-color", false, "Produce monochrome output")
}

// check refuses what docker compose refuses.
func (f *foregroundFlags) check(detach bool) error {
	if f.exitCodeFrom != "" {
		f.abort = true
	}
	switch {
	case detach && f.abort:
		return errors.New("--abort-on-container-exit and --detach are incompatible")
	case detach && f.attachDeps:
		return errors.New("--attach-dependencies and --detach are incompatible")
	case len(f.attach) > 0 && f.attachDeps:
		return errors.New("--attach and --attach-dependencies are incompatible")
	}
	return nil
}

// foregroundOptions are what foreground follows and how.
type foregroundOptions struct {
	attach       engine.AttachOptions // Services nil: none
	abort        bool
	exitCodeFrom string
}

// options resolves the attached services: --attach's, else the named
// services (with --attach-dependencies, their dependencies too), else
// all; less --no-attach's.
func (f *foregroundFlags) options(p spec.Project, services []string, noDeps, tty bool) (foregroundOptions, error) {
	if f.exitCodeFrom != "" {
		if _, ok := p.Services[f.exitCodeFrom]; !ok {
			return foregroundOptions{}, fmt.Errorf("--exit-code-from: no such service: %s", f.exitCodeFrom)
		}
	}
	attach := slices.Clone(f.attach)
	switch {
	case len(attach) > 0:
	case f.attachDeps:
		var err error
		if attach, err = engine.Selected(p, services, noDeps); err != nil {
			return foregroundOptions{}, err
		}
	case len(services) > 0:
		attach = slices.Clone(services)
	default:
		attach = p.ServiceNames()
	}
	attach = slices.DeleteFunc(attach, func(n string) bool { return slices.Contains(f.noAttach, n) })
	if len(attach) == 0 {
		attach = nil
	}
	return foregroundOptions{
		attach: engine.AttachOptions{Services: attach, Color: tty && !f.noColor, Timestamps: f.timestamps, NoPrefix: f.noLogPrefix},
		abort:  f.abort, exitCodeFrom: f.exitCodeFrom,
	}, nil
}

// foreground streams the attached containers' output until they all exit
// or the user presses Ctrl-C, then stops the project's (a second Ctrl-C
// kills them). With abort, the first attached container to exit stops
// them all, and up exits with its code (or exitCodeFrom's).
func foreground(ctx context.Context, s streams, se *clientdeploy.Session, p spec.Project, services []string, o foregroundOptions) error {
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
	aborted := make(chan abort, 1)
	if o.abort {
		go func() {
			ab := firstExit(attachCtx, se.Engine(), p.Name, o.attach.Services)
			if ab.ok {
				abortProject(ctx, s, se, p.Name, services)
			}
			aborted <- ab
		}()
	}
	var err error
	if o.attach.Services == nil { // --no-attach left none: wait for Ctrl-C
		<-attachCtx.Done()
	} else {
		o.attach.Out = s.Out
		err = se.Engine().Attach(attachCtx, p.Name, o.attach)
	}
	interrupted := attachCtx.Err() != nil
	stopAttach()
	var ab abort
	if o.abort {
		ab = <-aborted // its stop done, or given up
	}
	if err != nil {
		return err
	}
	if !interrupted {
		if o.abort && !ab.ok {
			// Every attached container exited before the watch saw one
			// go: that is the first exit too.
			abortProject(ctx, s, se, p.Name, services)
			code, err := se.Engine().WaitExit(ctx, p.Name, o.attach.Services)
			ab = abort{code: code, ok: err == nil}
		}
		return exitCode(ctx, se, p.Name, o, ab)
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
	err = se.Engine().Stop(stopCtx, p.Name, engine.LifecycleOptions{Services: services})
	if stopCtx.Err() != nil {
		return se.Engine().Kill(ctx, p.Name, engine.LifecycleOptions{Services: services})
	}
	return err
}

// abort is what the abort watch saw: the first attached container's exit.
type abort struct {
	code int
	ok   bool
}

// abortProject stops the up's services: --abort-on-container-exit.
func abortProject(ctx context.Context, s streams, se *clientdeploy.Session, project string, services []string) {
	fmt.Fprintln(s.Err, "Aborting on container exit...")
	if err := se.Engine().Stop(ctx, project, engine.LifecycleOptions{Services: services}); err != nil {
		fmt.Fprintln(s.Err, "WARN stopping the project:", err)
	}
}

// firstExit waits for the first exit of a container of services: one
// that stays exited (WaitExit), or a "die" event (a container its
// runtime restarts, as a Deployment's on kubernetes, never stays
// exited). Not ok when ctx ended first.
func firstExit(ctx context.Context, eng clientdeploy.Engine, project string, services []string) abort {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := make(chan abort, 2)
	go func() {
		if code, err := eng.WaitExit(ctx, project, services); err == nil {
			first <- abort{code: code, ok: true}
		}
	}()
	go func() {
		// A backend without events says so and the wait alone watches.
		_ = eng.Events(ctx, project, engine.EventsOptions{Services: services}, func(ev backends.Event) {
			if ev.Action != "die" {
				return
			}
			ab := abort{ok: true}
			if ev.ExitCode != nil {
				ab.code = *ev.ExitCode
			}
			select {
			case first <- ab:
			default:
			}
		})
	}()
	select {
	case ab := <-first:
		return ab
	case <-ctx.Done():
		return abort{}
	}
}

// exitCode is up's exit once its attached containers are gone: with
// --exit-code-from that service's code, else, after an abort, the code of
// the container that caused it.
func exitCode(ctx context.Context, se *clientdeploy.Session, project string, o foregroundOptions, ab abort) error {
	code := 0
	switch {
	case o.exitCodeFrom != "":
		var err error
		if code, err = se.Engine().WaitExit(ctx, project, []string{o.exitCodeFrom}); err != nil {
			return err
		}
	case ab.ok:
		code = ab.code
	}
	if code != 0 {
		return exitError{code: code}
	}
	return nil
}
