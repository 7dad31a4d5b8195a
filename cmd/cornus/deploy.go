package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/load"
)

func newDeployCmd(s streams) *cobra.Command {
	var file, progressMode, server string
	var del, volumes, detach bool
	var o engine.UpOptions
	var ef egressFlags
	var localMounts, credentials []string
	cmd := &cobra.Command{
		Use:   "deploy -f deploy.yaml [--delete]",
		Short: "Apply (or with --delete, remove) a native deploy spec",
		Long: "Apply a native deploy spec. With --server the deployment lives on that cornus server for as long as this " +
			"command runs (Ctrl-C removes it), unless --detach leaves it running there.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			path := file
			if dir, err := s.workingDir(); err == nil && !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			r, err := load.Spec(path)
			if err != nil {
				return err
			}
			se, err := openSession(ctx, s, server, r.Dir, progressMode)
			if err != nil {
				return err
			}
			defer se.Close()
			if del {
				return se.Engine().Down(ctx, r.Project.Name, engine.DownOptions{Spec: &r.Project, Volumes: volumes, RemoveOrphans: true})
			}
			hold := clientdeploy.HoldForeground
			if detach {
				hold = clientdeploy.HoldNone
			}
			_, err = se.Deploy(ctx, r.Project, clientdeploy.Options{
				Up: o, Egress: &ef.EgressFlags, LocalMounts: localMounts, Credentials: credentials, Dir: r.Dir, Hold: hold,
			})
			if err != nil || se.Server() == "" || detach {
				return err
			}
			fmt.Fprintf(s.Err, "Deployed %s on %s: it runs while this command does (Ctrl-C removes it; --detach leaves it running).\n",
				r.Project.Name, se.Server())
			select {
			case <-ctx.Done():
			case <-se.Held():
				return fmt.Errorf("the session with %s ended: the server removes the deployment", se.Server())
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "deploy.yaml", "Deploy spec (YAML or JSON)")
	fl.BoolVar(&del, "delete", false, "Remove everything the spec deployed")
	fl.BoolVarP(&volumes, "volumes", "v", false, "With --delete, also remove named volumes")
	fl.BoolVar(&o.Wait, "wait", false, "Wait for services to be running and healthy")
	fl.BoolVar(&o.ForceRecreate, "force-recreate", false, "Recreate containers even if unchanged")
	fl.BoolVar(&o.RemoveOrphans, "remove-orphans", false, "Remove containers of apps no longer in the spec")
	fl.StringVar(&progressMode, "progress", "auto", "Progress output: auto, tty, plain, json or quiet")
	fl.StringVar(&server, "server", "", "Deploy to a cornus server (URL; default $CORNUS_SERVER)")
	fl.BoolVar(&detach, "detach", false, "With --server, leave the deployment running when this command ends")
	fl.StringArrayVar(&localMounts, "local-mount", nil, "With --server, bind [SERVICE=]SRC:DST[:ro] of this machine into the apps (all of them without SERVICE=), served live over the session; repeatable")
	fl.StringArrayVar(&credentials, "credential", nil, "With --server, let the apps (SERVICE/ only that one) ask this machine for credential NAME, minted from env:VAR, file:PATH, cmd:COMMAND ARGS or helper:HELPER:REGISTRY; delivered as /run/cornus-credentials/NAME, with NAME@aws as the AWS container-credentials endpoint, or with NAME@env:VARIABLE as that variable at the app's start too: [SERVICE/]NAME[@aws|@env:VARIABLE]=KIND:VALUE; repeatable")
	ef.add(cmd)
	return cmd
}
