package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// egressFlags are the command-line egress policy (deploy, egress check).
type egressFlags struct {
	mode   string
	routes []string // PATTERN=ROUTE
	def    string
	pac    string // a PAC file
}

func (f *egressFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "egress", "", "Egress mode for every app: env, proxy or transparent")
	fl.StringArrayVar(&f.routes, "egress-route", nil, "PATTERN=ROUTE (host glob, CIDR, optional :port; route client, gateway, cluster or deny); first match wins; repeatable")
	fl.StringVar(&f.def, "egress-default", "", "Route of destinations no rule matches (default cluster)")
	fl.StringVar(&f.pac, "egress-pac", "", "A PAC file deciding routes (FindProxyForURL)")
}

func (f *egressFlags) set() bool {
	return f.mode != "" || len(f.routes) > 0 || f.def != "" || f.pac != ""
}

// policy is the flags as a spec egress block.
func (f *egressFlags) policy() (*spec.Egress, error) {
	e := &spec.Egress{Mode: f.mode, Default: f.def}
	for _, r := range f.routes {
		pat, route, ok := strings.Cut(r, "=")
		if !ok {
			return nil, fmt.Errorf("--egress-route %q: want PATTERN=ROUTE, e.g. '*.corp.example=client'", r)
		}
		e.Rules = append(e.Rules, spec.EgressRule{Pattern: pat, Route: route})
	}
	if f.pac != "" {
		data, err := boundedfile.Read(f.pac, boundedfile.SpecFile)
		if err != nil {
			return nil, fmt.Errorf("--egress-pac: %w", err)
		}
		e.Script = string(data)
	}
	if _, err := egress.Compile(e, "--egress", egress.PACOptions{}); err != nil {
		return nil, err
	}
	return e, nil
}

// applyEgress gives every app the command line's policy (it replaces the
// spec's, as a service block replaces the project default), then the
// client's proxy variables to apps in env mode.
func applyEgress(p *spec.Project, f *egressFlags, environ []string) error {
	if f != nil && f.set() {
		e, err := f.policy()
		if err != nil {
			return err
		}
		for name, a := range p.Services {
			a.Egress = e
			p.Services[name] = a
		}
	}
	egress.InjectEnv(p, environ)
	return nil
}

// refuseDetachedClientRoutes: a detached deployment outlives its client,
// so nothing could carry a client route.
func refuseDetachedClientRoutes(p spec.Project) error {
	bad, err := egress.Routed(p, egress.Client)
	if err != nil || len(bad) == 0 {
		return err
	}
	return fmt.Errorf("--detach: services %s may route egress to the client, which a detached deployment outlives; drop --detach or the client routes (a PAC script counts as possibly routing to the client)", strings.Join(bad, ", "))
}

func newEgressCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "egress", Short: "Egress policy tools"}
	cmd.AddCommand(newEgressCheckCmd(s))
	return cmd
}

func newEgressCheckCmd(s streams) *cobra.Command {
	var ef egressFlags
	cf := &composeFlags{}
	var service string
	cmd := &cobra.Command{
		Use:   "check [policy flags | -f FILE [--service S]] DEST...",
		Short: "Print the route each destination (host[:port] or IP) takes, and what decided it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, at, err := checkedPolicy(cmd.Context(), s, &ef, cf, service)
			if err != nil {
				return err
			}
			pol, err := egress.Compile(e, at, egress.PACOptions{})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "DESTINATION\tROUTE\tDECIDED BY")
			for _, a := range args {
				d, err := egress.ParseDestination(a)
				if err != nil {
					return err
				}
				dec := pol.Decide(d)
				fmt.Fprintf(tw, "%s\t%s\t%s\n", d, dec.Route, dec.By)
			}
			return tw.Flush()
		},
	}
	ef.add(cmd)
	fl := cmd.Flags()
	fl.StringArrayVarP(&cf.files, "file", "f", nil, "A Compose file whose x-cornus-egress to check")
	fl.StringVar(&service, "service", "", "With -f: the service whose policy to check")
	return cmd
}

// checkedPolicy is the policy egress check evaluates: the flags', else a
// service's from the Compose file.
func checkedPolicy(ctx context.Context, s streams, ef *egressFlags, cf *composeFlags, service string) (*spec.Egress, string, error) {
	if ef.set() {
		if len(cf.files) > 0 {
			return nil, "", errors.New("give either policy flags or -f, not both")
		}
		e, err := ef.policy()
		return e, "--egress", err
	}
	if len(cf.files) == 0 {
		return nil, "", errors.New("no policy: give --egress-route/--egress-default/--egress-pac, or -f FILE")
	}
	r, err := cf.loadQuiet(ctx, s)
	if err != nil {
		return nil, "", err
	}
	names := make([]string, 0, len(r.Project.Services))
	for name := range r.Project.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	if service == "" {
		if len(names) != 1 {
			return nil, "", fmt.Errorf("the project has services %s: choose one with --service", strings.Join(names, ", "))
		}
		service = names[0]
	}
	if !slices.Contains(names, service) {
		return nil, "", fmt.Errorf("no service %q (services: %s)", service, strings.Join(names, ", "))
	}
	return r.Project.Services[service].Egress, "services." + service + ".egress", nil
}
