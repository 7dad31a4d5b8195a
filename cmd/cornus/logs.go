package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
)

func newLogsCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.LogsOptions
	var tail, since, until string
	var noColor bool
	cmd := &cobra.Command{
		Use:   "logs [OPTIONS] [SERVICE...]",
		Short: "View output from containers",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Tail = -1
			if tail != "all" {
				n, err := strconv.Atoi(tail)
				if err != nil || n < 0 {
					return fmt.Errorf("--tail %q: use a number of lines or all", tail)
				}
				o.Tail = n
			}
			if since != "" {
				t, err := parseSince(since)
				if err != nil {
					return err
				}
				o.Since = t
			}
			if until != "" {
				t, err := parseSince(until)
				if err != nil {
					return err
				}
				o.Until = t
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			se.NoteEmpty(ctx, s.Err, t.name)
			o.Services, o.Out, o.Color = args, s.Out, !noColor && isTerminal(s.Out)
			return se.Engine().Logs(ctx, t.name, o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Follow, "follow", "f", false, "Follow log output")
	fl.StringVarP(&tail, "tail", "n", "all", "Number of lines to show from the end of the logs for each container")
	fl.BoolVarP(&o.Timestamps, "timestamps", "t", false, "Show timestamps")
	fl.StringVar(&since, "since", "", "Show logs since a timestamp (2013-01-02T13:23:37Z) or relative (42m)")
	fl.BoolVar(&o.NoPrefix, "no-log-prefix", false, "Don't print a prefix in logs")
	fl.StringVar(&until, "until", "", "Show logs before a timestamp (2013-01-02T13:23:37Z) or relative (42m)")
	fl.IntVar(&o.Index, "index", 0, "Index of the container if the service has several replicas")
	fl.BoolVar(&noColor, "no-color", false, "Produce monochrome output")
	return cmd
}

func parseSince(s string) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return time.Now().Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: use a timestamp (2013-01-02T13:23:37Z), a Unix time or a duration (42m)", s)
}
