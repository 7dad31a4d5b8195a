package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/load"
)

func newDeployCmd(s streams) *cobra.Command {
	var file, progressMode string
	var del, volumes bool
	var o engine.UpOptions
	cmd := &cobra.Command{
		Use:   "deploy -f deploy.yaml [--delete]",
		Short: "Apply (or with --delete, remove) a native deploy spec",
		Args:  cobra.NoArgs,
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
			se, err := openSession(ctx, s, r.Dir, progressMode)
			if err != nil {
				return err
			}
			defer se.Close()
			if del {
				return se.engine.Down(ctx, r.Project.Name, engine.DownOptions{Spec: &r.Project, Volumes: volumes, RemoveOrphans: true})
			}
			se.printAllWarnings(s.Err, r.Project)
			_, err = se.engine.Up(ctx, r.Project, o)
			return err
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
	return cmd
}
