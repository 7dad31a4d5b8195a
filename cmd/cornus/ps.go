package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/statustext"
)

type psOptions struct {
	all      bool
	quiet    bool
	services bool
	format   string
	status   []string // --status, and --filter status=
	filters  []string
}

// psStates are the states ps --status takes, docker compose's.
var psStates = []string{"paused", "restarting", "removing", "running", "dead", "created", "exited"}

// statuses reads --status and --filter status=: the states to show
// (none: any).
func (o psOptions) statuses() ([]string, error) {
	out := slices.Clone(o.status)
	for _, f := range o.filters {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k != "status" {
			return nil, fmt.Errorf("--filter %q: the only filter is status=STATE", f)
		}
		out = append(out, v)
	}
	for _, st := range out {
		if !slices.Contains(psStates, st) {
			return nil, fmt.Errorf("status %q: want one of %s", st, strings.Join(psStates, ", "))
		}
	}
	return out, nil
}

func newPSCmd(f *composeFlags, s streams) *cobra.Command {
	var o psOptions
	cmd := &cobra.Command{
		Use:   "ps [OPTIONS] [SERVICE...]",
		Short: "List containers",
		RunE: func(cmd *cobra.Command, args []string) error {
			tmpl, err := psTemplate(o.format)
			if err != nil {
				return err
			}
			states, err := o.statuses()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			cs, err := se.Engine().PS(ctx, t.name, engine.PSOptions{Services: args, All: o.all || len(states) > 0})
			if err != nil {
				return err
			}
			if len(states) > 0 {
				cs = slices.DeleteFunc(cs, func(c backends.Container) bool { return !slices.Contains(states, string(c.State)) })
			}
			if len(cs) == 0 && len(args) == 0 {
				se.NoteEmpty(ctx, s.Err, t.name)
			}
			if tmpl != nil {
				return tmpl.print(s.Out, cs)
			}
			return printPS(s, cs, o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.all, "all", "a", false, "Show all containers, including stopped ones")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "Only display IDs")
	fl.BoolVar(&o.services, "services", false, "Display services")
	fl.StringVar(&o.format, "format", "table", "Output format: table, json, or a Go template ('table TEMPLATE' adds headers)")
	fl.StringArrayVar(&o.status, "status", nil, "Filter services by status: "+strings.Join(psStates, ", "))
	fl.StringArrayVar(&o.filters, "filter", nil, "Filter services by a property (status=STATE)")
	return cmd
}

func printPS(s streams, cs []backends.Container, o psOptions) error {
	switch {
	case o.quiet:
		for _, c := range cs {
			fmt.Fprintln(s.Out, c.ID)
		}
		return nil
	case o.services:
		seen := map[string]bool{}
		for _, c := range cs {
			if !seen[c.App()] {
				seen[c.App()] = true
				fmt.Fprintln(s.Out, c.App())
			}
		}
		return nil
	case o.format == "json":
		enc := json.NewEncoder(s.Out)
		for _, c := range cs {
			if err := enc.Encode(psJSON(c)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tIMAGE\tCOMMAND\tSERVICE\tCREATED\tSTATUS\tPORTS")
	for _, c := range cs {
		cmdline := c.Command
		if len(cmdline) > 20 {
			cmdline = cmdline[:19] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\t%s\t%s\t%s\n", c.Name, c.Image, cmdline, c.App(), ago(c.Created), status(c), formatPorts(c.Ports))
	}
	return tw.Flush()
}

// psJSON is docker compose's `ps --format json` object.
type publisher struct {
	URL           string
	TargetPort    int
	PublishedPort int
	Protocol      string
}

// psRow is docker compose's `ps --format json` object, also what a
// --format template sees.
type psRow struct {
	ID, Name, Image, Command, Project, Service, CreatedAt, State, Status, Health, Ports, Labels string
	Created                                                                                     int64
	ExitCode                                                                                    int
	Publishers                                                                                  []publisher
}

func psJSON(c backends.Container) psRow {
	pubs := []publisher{}
	for _, p := range c.Ports {
		pubs = append(pubs, publisher{URL: p.HostIP, TargetPort: p.ContainerPort, PublishedPort: p.HostPort, Protocol: p.Protocol})
	}
	return psRow{
		ID: c.ID, Name: c.Name, Image: c.Image, Command: c.Command, Project: c.Project(), Service: c.App(),
		CreatedAt: c.Created.Format("2006-01-02 15:04:05 -0700 MST"), State: string(c.State), Status: status(c),
		Health: string(c.Health), Ports: formatPorts(c.Ports), Labels: labelString(c.Labels),
		Created: c.Created.Unix(), ExitCode: c.ExitCode, Publishers: pubs,
	}
}

func labelString(l map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		kv = append(kv, k+"="+l[k])
	}
	return strings.Join(kv, ",")
}

// status is the container's status line as docker ps words it, with the
// number of restarts where the runtime counts them.
func status(c backends.Container) string {
	s := statustext.Docker(c, time.Now())
	if c.RestartCount > 0 {
		s += fmt.Sprintf(" (restarts: %d)", c.RestartCount)
	}
	return s
}
