package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"
)

type configOptions struct {
	format   string
	services bool
	networks bool
	volumes  bool
	images   bool
	quiet    bool
}

func newConfigCmd(f *composeFlags, s streams) *cobra.Command {
	o := &configOptions{}
	cmd := &cobra.Command{
		Use:   "config [OPTIONS]",
		Short: "Print the normalized native deploy spec of the project",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "yaml" && o.format != "json" {
				return fmt.Errorf("--format %q: use yaml or json", o.format)
			}
			r, err := f.load(cmd.Context(), s)
			if err != nil {
				return err
			}
			p := r.Project
			switch {
			case o.quiet:
				return nil
			case o.services:
				for _, n := range p.ServiceNames() {
					fmt.Fprintln(s.Out, n)
				}
				return nil
			case o.networks:
				for _, n := range slices.Sorted(maps.Keys(p.Networks)) {
					fmt.Fprintln(s.Out, n)
				}
				return nil
			case o.volumes:
				for _, n := range slices.Sorted(maps.Keys(p.Volumes)) {
					fmt.Fprintln(s.Out, n)
				}
				return nil
			case o.images:
				for _, n := range p.ServiceNames() {
					fmt.Fprintln(s.Out, p.Services[n].Image)
				}
				return nil
			}
			out, err := p.EncodeYAML()
			if o.format == "json" {
				out, err = p.EncodeJSON()
			}
			if err != nil {
				return err
			}
			_, err = s.Out.Write(out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.format, "format", "yaml", "Output format: yaml or json")
	fl.BoolVar(&o.services, "services", false, "Print the service names, one per line")
	fl.BoolVar(&o.networks, "networks", false, "Print the network names, one per line")
	fl.BoolVar(&o.volumes, "volumes", false, "Print the volume names, one per line")
	fl.BoolVar(&o.images, "images", false, "Print the image names, one per line (a service's, in service order)")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "Only validate the configuration, print nothing")
	fl.StringVar(&f.devcontainer, "devcontainer", "", "Load this devcontainer.json instead of Compose files")
	return cmd
}
