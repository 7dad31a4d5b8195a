package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/engine"
)

// lifecycleCmd builds start/stop/restart/kill/rm: resolve the project,
// open a session, call one engine verb.
func lifecycleCmd(f *composeFlags, s streams, use, short string, run func(*cobra.Command, *clientdeploy.Session, target, engine.LifecycleOptions) error, flags func(*cobra.Command, *engine.LifecycleOptions)) *cobra.Command {
	var o engine.LifecycleOptions
	var timeout int
	cmd := &cobra.Command{
		Use:   use + " [OPTIONS] [SERVICE...]",
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, false, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			se.NoteEmpty(ctx, s.Err, t.name)
			o.Services, o.Spec = args, t.spec
			if fl := cmd.Flags().Lookup("timeout"); fl != nil && fl.Changed {
				d := time.Duration(timeout) * time.Second
				o.Timeout = &d
			}
			return run(cmd, se, t, o)
		},
	}
	if flags != nil {
		flags(cmd, &o)
	}
	if use == "stop" || use == "restart" {
		cmd.Flags().IntVarP(&timeout, "timeout", "t", 0, "Seconds to wait before killing (default: the container's stop_grace_period)")
	}
	return cmd
}

func newStartCmd(f *composeFlags, s streams) *cobra.Command {
	return lifecycleCmd(f, s, "start", "Start existing containers", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		return se.Engine().Start(cmd.Context(), t.name, o)
	}, nil)
}

func newStopCmd(f *composeFlags, s streams) *cobra.Command {
	return lifecycleCmd(f, s, "stop", "Stop running containers without removing them", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		return se.Engine().Stop(cmd.Context(), t.name, o)
	}, nil)
}

func newRestartCmd(f *composeFlags, s streams) *cobra.Command {
	return lifecycleCmd(f, s, "restart", "Restart containers", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		return se.Engine().Restart(cmd.Context(), t.name, o)
	}, nil)
}

func newKillCmd(f *composeFlags, s streams) *cobra.Command {
	return lifecycleCmd(f, s, "kill", "Force stop containers", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		return se.Engine().Kill(cmd.Context(), t.name, o)
	}, func(cmd *cobra.Command, o *engine.LifecycleOptions) {
		cmd.Flags().StringVarP(&o.Signal, "signal", "s", "SIGKILL", "Signal to send")
	})
}

func newPauseCmd(f *composeFlags, s streams) *cobra.Command {
	return lifecycleCmd(f, s, "pause", "Pause services", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		return se.Engine().Pause(cmd.Context(), t.name, o)
	}, nil)
}

func newUnpauseCmd(f *composeFlags, s streams) *cobra.Command {
	return lifecycleCmd(f, s, "unpause", "Unpause services", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		return se.Engine().Unpause(cmd.Context(), t.name, o)
	}, nil)
}

func newRmCmd(f *composeFlags, s streams) *cobra.Command {
	var stop bool
	return lifecycleCmd(f, s, "rm", "Remove stopped containers", func(cmd *cobra.Command, se *clientdeploy.Session, t target, o engine.LifecycleOptions) error {
		o.Stopped = !stop
		removed, err := se.Engine().Remove(cmd.Context(), t.name, o)
		if err == nil && len(removed) == 0 {
			fmt.Fprintln(s.Err, "No stopped containers")
		}
		return err
	}, func(cmd *cobra.Command, o *engine.LifecycleOptions) {
		fl := cmd.Flags()
		fl.BoolVarP(&stop, "stop", "s", false, "Stop the containers first if they are running")
		fl.BoolVarP(&o.Volumes, "volumes", "v", false, "Remove anonymous volumes attached to the containers")
		fl.BoolP("force", "f", false, "Don't ask to confirm removal (cornus never asks)")
	})
}
