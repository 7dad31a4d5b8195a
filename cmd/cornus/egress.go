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

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/spec"
)

// egressFlags binds the command-line egress policy (deploy, egress
// check) into clientdeploy.EgressFlags.
type egressFlags struct{ clientdeploy.EgressFlags }

func (f *egressFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Mode, "egress", "", "Egress mode for every app: env, proxy or transparent")
	fl.StringArrayVar(&f.Routes, "egress-route", nil, "PATTERN=ROUTE (host glob, CIDR, optional :port; route client, gateway, cluster or deny); first match wins; repeatable")
	fl.StringVar(&f.Default, "egress-default", "", "Route of destinations no rule matches (default cluster)")
	fl.StringVar(&f.PAC, "egress-pac", "", "A PAC file deciding routes (FindProxyForURL)")
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
	if ef.Set() {
		if len(cf.files) > 0 {
			return nil, "", errors.New("give either policy flags or -f, not both")
		}
		e, err := ef.Policy()
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
