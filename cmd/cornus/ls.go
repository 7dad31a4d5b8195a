package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
)

func newLsCmd(f *composeFlags, s streams) *cobra.Command {
	var all, quiet bool
	var format string
	var filters []string
	cmd := &cobra.Command{
		Use:   "ls [OPTIONS]",
		Short: "List running compose projects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name, err := lsFilter(filters)
			if err != nil {
				return err
			}
			se, err := openSession(cmd.Context(), s, f.server, "", "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			ps, err := se.Engine().Projects(cmd.Context(), all)
			if err != nil {
				return err
			}
			var shown []engine.ProjectStatus
			for _, p := range ps {
				if name == "" || strings.Contains(p.Name, name) {
					shown = append(shown, p)
				}
			}
			return printProjects(s, shown, format, quiet)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&all, "all", "a", false, "Show all stopped Compose projects")
	fl.BoolVarP(&quiet, "quiet", "q", false, "Only display project names")
	fl.StringVar(&format, "format", "table", "Format the output: table or json")
	fl.StringArrayVar(&filters, "filter", nil, "Filter output based on conditions provided (name=NAME)")
	return cmd
}

// lsFilter reads ls's filters: docker compose's one, name=.
func lsFilter(filters []string) (string, error) {
	name := ""
	for _, fl := range filters {
		k, v, ok := strings.Cut(fl, "=")
		if !ok || k != "name" {
			return "", fmt.Errorf("--filter %q: the only filter is name=NAME", fl)
		}
		name = v
	}
	return name, nil
}

// printProjects writes ls's table, JSON or names.
func printProjects(s streams, ps []engine.ProjectStatus, format string, quiet bool) error {
	switch {
	case quiet:
		for _, p := range ps {
			fmt.Fprintln(s.Out, p.Name)
		}
		return nil
	case format == "json":
		type row struct{ Name, Status, ConfigFiles string }
		rows := []row{}
		for _, p := range ps {
			rows = append(rows, row{Name: p.Name, Status: p.Status(), ConfigFiles: p.ConfigFiles})
		}
		return json.NewEncoder(s.Out).Encode(rows)
	case format != "table":
		return fmt.Errorf("--format %q: want table or json", format)
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tCONFIG FILES")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Status(), p.ConfigFiles)
	}
	return tw.Flush()
}
