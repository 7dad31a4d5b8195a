package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newImagesCmd(f *composeFlags, s streams) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "images [OPTIONS] [SERVICE...]",
		Short: "List images used by the created containers",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			uses, err := se.Engine().Images(ctx, t.name, args)
			if err != nil {
				return err
			}
			if quiet {
				for _, u := range uses {
					fmt.Fprintln(s.Out, u.Image.ID)
				}
				return nil
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 3, ' ', 0)
			fmt.Fprintln(tw, "CONTAINER\tREPOSITORY\tTAG\tIMAGE ID\tSIZE")
			for _, u := range uses {
				repo, tag := splitRef(u.Ref)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Container, repo, tag, shortID(u.Image.ID), humanSize(u.Image.Size))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "Only display IDs")
	return cmd
}

// splitRef splits "repo:tag" (a registry port is not a tag).
func splitRef(ref string) (string, string) {
	i := strings.LastIndexByte(ref, ':')
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "latest"
	}
	return ref[:i], ref[i+1:]
}

func newTopCmd(f *composeFlags, s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "top [SERVICE...]",
		Short: "Display the running processes",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			tops, err := se.Engine().Top(ctx, t.name, args)
			if err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(tops)) {
				p := tops[name]
				fmt.Fprintln(s.Out, name)
				tw := tabwriter.NewWriter(s.Out, 0, 0, 3, ' ', 0)
				fmt.Fprintln(tw, strings.Join(p.Titles, "\t"))
				for _, row := range p.Processes {
					fmt.Fprintln(tw, strings.Join(row, "\t"))
				}
				_ = tw.Flush()
				fmt.Fprintln(s.Out)
			}
			return nil
		},
	}
}

func newPortCmd(f *composeFlags, s streams) *cobra.Command {
	var proto string
	var index int
	cmd := &cobra.Command{
		Use:   "port [OPTIONS] SERVICE PRIVATE_PORT",
		Short: "Print the public port for a port binding",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := strconv.Atoi(args[1])
			if err != nil {
				return fmt.Errorf("PRIVATE_PORT %q is not a number", args[1])
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			addr, err := se.Engine().Port(ctx, t.name, args[0], port, proto, index)
			if err != nil {
				return err
			}
			fmt.Fprintln(s.Out, addr)
			return nil
		},
	}
	cmd.Flags().StringVar(&proto, "protocol", "tcp", "tcp or udp")
	cmd.Flags().IntVar(&index, "index", 1, "Index of the container if the service has several replicas")
	return cmd
}
