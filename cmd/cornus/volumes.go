package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends"
)

// volumeRow is a volume as volumes --format json and templates see it
// (docker compose's fields).
type volumeRow struct {
	Name, Driver, Mountpoint, Labels, Scope string
}

func newVolumesCmd(f *composeFlags, s streams) *cobra.Command {
	var quiet bool
	var format string
	cmd := &cobra.Command{
		Use:   "volumes [OPTIONS] [SERVICE...]",
		Short: "List volumes",
		Long:  "List the project's volumes; with services, those the services mount.",
		RunE: func(cmd *cobra.Command, args []string) error {
			tmpl, err := psTemplate(format)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, len(args) == 0, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			vs, err := se.Engine().Volumes(ctx, t.name)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				if vs, err = mountedBy(vs, t, args); err != nil {
					return err
				}
			}
			rows := make([]any, len(vs))
			for i, v := range vs {
				rows[i] = volumeRow{Name: v.Name, Driver: v.Driver, Mountpoint: v.Mountpoint, Scope: "local", Labels: joinLabels(v.Labels)}
			}
			switch {
			case quiet:
				for _, v := range vs {
					fmt.Fprintln(s.Out, v.Name)
				}
			case tmpl != nil:
				return tmpl.printRows(s.Out, rows)
			case format == "json":
				enc := json.NewEncoder(s.Out)
				for _, r := range rows {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
			default:
				tw := tabwriter.NewWriter(s.Out, 0, 0, 4, ' ', 0)
				fmt.Fprintln(tw, "DRIVER\tVOLUME NAME")
				for _, v := range vs {
					fmt.Fprintf(tw, "%s\t%s\n", v.Driver, v.Name)
				}
				return tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "Only display volume names")
	cmd.Flags().StringVar(&format, "format", "table", "Format the output: table, json or a Go template")
	return cmd
}

// mountedBy keeps the volumes the services mount (by their key in the
// Compose file).
func mountedBy(vs []backends.Volume, t target, services []string) ([]backends.Volume, error) {
	if t.spec == nil {
		return nil, fmt.Errorf("volumes %s: the Compose file is needed to know what the services mount", strings.Join(services, " "))
	}
	keys := map[string]bool{}
	for _, n := range services {
		a, ok := t.spec.Services[n]
		if !ok {
			return nil, fmt.Errorf("no such service: %s", n)
		}
		for _, m := range a.Volumes {
			keys[m.Source] = m.Source != ""
		}
	}
	return slices.DeleteFunc(vs, func(v backends.Volume) bool { return !keys[v.Labels[backends.ComposeVolume]] }), nil
}

// joinLabels is labels as docker prints them: k=v,k=v, sorted.
func joinLabels(labels map[string]string) string {
	kv := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, k+"="+labels[k])
	}
	return strings.Join(kv, ",")
}
