package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

type configOptions struct {
	format   string
	services bool
	networks bool
	volumes  bool
	images   bool
	profiles bool
	hash     string
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
			case o.profiles:
				for _, n := range r.Profiles {
					fmt.Fprintln(s.Out, n)
				}
				return nil
			case o.hash != "":
				return printHashes(s, p, o.hash)
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
	fl.BoolVar(&o.profiles, "profiles", false, "Print the profile names, one per line")
	fl.StringVar(&o.hash, "hash", "", `Print the service config hash, one "SERVICE HASH" per line; "*" for all services, or SERVICE[,SERVICE...]`)
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "Only validate the configuration, print nothing")
	fl.StringVar(&f.devcontainer, "devcontainer", "", "Load this devcontainer.json instead of Compose files")
	return cmd
}

// printHashes prints "SERVICE HASH" for each service which ("*": all),
// the hash up labels its containers with.
func printHashes(s streams, p spec.Project, which string) error {
	names := p.ServiceNames()
	if which != "*" {
		names = strings.Split(which, ",")
	}
	for _, n := range names {
		h, err := engine.ConfigHash(p, n, s.Environ)
		if err != nil {
			return fmt.Errorf("--hash: %w", err)
		}
		fmt.Fprintln(s.Out, n, h)
	}
	return nil
}
