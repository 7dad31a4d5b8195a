package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/buildinfo"
)

func newWaitCmd(f *composeFlags, s streams) *cobra.Command {
	var downProject bool
	cmd := &cobra.Command{
		Use:   "wait SERVICE [SERVICE...] [OPTIONS]",
		Short: "Block until the first service container stops",
		Long:  "Block until a container of the services stops; wait's exit code is that container's.",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, false, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			code, err := se.Engine().WaitExit(ctx, t.name, args)
			if err != nil {
				return err
			}
			if downProject {
				if err := se.Engine().Down(ctx, t.name, engine.DownOptions{Spec: t.spec}); err != nil {
					return err
				}
			}
			if code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&downProject, "down-project", false, "Drops project when the first container stops")
	return cmd
}

func newComposeVersionCmd(s streams) *cobra.Command {
	var short bool
	var format string
	cmd := &cobra.Command{
		Use:   "version [OPTIONS]",
		Short: "Show the cornus compose version information",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			switch {
			case short:
				fmt.Fprintln(s.Out, buildinfo.Version())
			case format == "json":
				return json.NewEncoder(s.Out).Encode(map[string]string{"version": buildinfo.Version()})
			case format == "" || format == "pretty":
				fmt.Fprintf(s.Out, "cornus compose version %s\n", buildinfo.Version())
			default:
				return fmt.Errorf("--format %q: want pretty or json", format)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "Shows only the version number")
	cmd.Flags().StringVarP(&format, "format", "f", "", "Format the output: pretty or json")
	return cmd
}
