package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/load"
)

func newValidateCmd(s streams) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "validate -f deploy.yaml",
		Short: "Check a native deploy spec and report every problem",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := file
			if dir, err := s.workingDir(); err == nil && !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			r, err := load.Spec(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "%s: valid (project %q, %d services)\n", file, r.Project.Name, len(r.Project.Services))
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "deploy.yaml", "Deploy spec to validate (YAML or JSON)")
	return cmd
}
