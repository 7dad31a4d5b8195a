package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
)

func newEventsCmd(f *composeFlags, s streams) *cobra.Command {
	var asJSON bool
	var since, until string
	cmd := &cobra.Command{
		Use:   "events [OPTIONS] [SERVICE...]",
		Short: "Receive real time events from containers",
		RunE: func(cmd *cobra.Command, args []string) error {
			o := engine.EventsOptions{Services: args}
			var err error
			if o.Since, err = eventTime("since", since); err != nil {
				return err
			}
			if o.Until, err = eventTime("until", until); err != nil {
				return err
			}
			t, se, err := f.openProject(cmd.Context(), s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			return se.Engine().Events(cmd.Context(), t.name, o, func(ev backends.Event) { writeEvent(s.Out, ev, asJSON) })
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "Output events as a stream of json objects")
	fl.StringVar(&since, "since", "", "Show events since this time (RFC 3339) or for this long (10m)")
	fl.StringVar(&until, "until", "", "Stream events until this time (RFC 3339) or for this long from now")
	return cmd
}

// eventTime reads --since/--until: a time, or a duration back (since)
// or ahead (until) of now.
func eventTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time or a duration such as 10m", flag, v)
	}
	if flag == "since" {
		return time.Now().Add(-d), nil
	}
	return time.Now().Add(d), nil
}

// writeEvent writes ev as docker compose events does: a line of text, or
// a JSON object with --json.
func writeEvent(w io.Writer, ev backends.Event, asJSON bool) {
	service := ev.Labels[backends.ComposeService]
	attrs := map[string]string{"image": ev.Image, "name": ev.Name}
	if ev.ExitCode != nil {
		attrs["exitCode"] = fmt.Sprint(*ev.ExitCode)
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"time": ev.Time, "type": "container", "action": ev.Action, "id": ev.ID, "service": service, "attributes": attrs})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintf(w, "%s container %s %s (image=%s, name=%s)\n", ev.Time.Format("2006-01-02 15:04:05.000000"), ev.Action, ev.ID, ev.Image, ev.Name)
}
