package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docker/go-units"
	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/engine"
)

// statsEvery is how often live stats refresh, as docker stats.
const statsEvery = time.Second

func newStatsCmd(f *composeFlags, s streams) *cobra.Command {
	var all, noStream, noTrunc bool
	var format string
	cmd := &cobra.Command{
		Use:   "stats [OPTIONS] [SERVICE]",
		Short: "Display a live stream of container(s) resource usage statistics",
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: want table or json", format)
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			sample := func() ([]engine.StatsSample, error) { return se.Engine().Stats(ctx, t.name, args, all) }
			return streamStats(ctx, s.Out, sample, statsView{json: format == "json", noTrunc: noTrunc, live: !noStream, clear: isTerminal(s.Out)})
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&all, "all", "a", false, "Show all containers (default shows just running)")
	fl.BoolVar(&noStream, "no-stream", false, "Disable streaming stats and only pull the first result")
	fl.BoolVar(&noTrunc, "no-trunc", false, "Do not truncate output")
	fl.StringVar(&format, "format", "table", "Format the output: table or json")
	return cmd
}

// statsView is how stats are shown.
type statsView struct {
	json, noTrunc, live, clear bool
}

// streamStats shows a table of samples a second apart (the first needs
// two, for CPU %), once (--no-stream) or until ctx ends.
func streamStats(ctx context.Context, out io.Writer, sample func() ([]engine.StatsSample, error), v statsView) error {
	began := time.Now()
	prev, err := sample()
	if err != nil {
		return err
	}
	for {
		// A second after the last sample was asked for: where a runtime
		// answers at its own tick (dockerd), the answer took most of it.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(statsEvery - time.Since(began)):
		}
		began = time.Now()
		cur, err := sample()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if v.clear && v.live && !v.json {
			fmt.Fprint(out, "\x1b[2J\x1b[H")
		}
		if err := writeStats(out, prev, cur, v); err != nil || !v.live {
			return err
		}
		prev = cur
	}
}

// writeStats writes one round: docker stats's columns, or a JSON object
// per container.
func writeStats(out io.Writer, prev, cur []engine.StatsSample, v statsView) error {
	before := map[string]engine.StatsSample{}
	for _, p := range prev {
		before[p.ID] = p
	}
	tw := tabwriter.NewWriter(out, 0, 0, 3, ' ', 0)
	if !v.json {
		fmt.Fprintln(tw, "CONTAINER ID\tNAME\tCPU %\tMEM USAGE / LIMIT\tMEM %\tNET I/O\tBLOCK I/O\tPIDS")
	}
	for _, c := range cur {
		st := c.Stats
		cpu, mem := cpuPercent(before[c.ID], c), 0.0
		if st.MemoryLimit > 0 {
			mem = float64(st.MemoryUsage) / float64(st.MemoryLimit) * 100
		}
		id := c.ID
		if !v.noTrunc && len(id) > 12 {
			id = id[:12]
		}
		row := map[string]string{
			"ID": id, "Container": id, "Name": c.Name, "CPUPerc": fmt.Sprintf("%.2f%%", cpu),
			"MemUsage": units.BytesSize(float64(st.MemoryUsage)) + " / " + units.BytesSize(float64(st.MemoryLimit)),
			"MemPerc":  fmt.Sprintf("%.2f%%", mem),
			"NetIO":    units.HumanSizeWithPrecision(float64(st.NetRx), 3) + " / " + units.HumanSizeWithPrecision(float64(st.NetTx), 3),
			"BlockIO":  units.HumanSizeWithPrecision(float64(st.BlockRead), 3) + " / " + units.HumanSizeWithPrecision(float64(st.BlockWrite), 3),
			"PIDs":     fmt.Sprint(st.Pids),
		}
		if v.json {
			b, _ := json.Marshal(row)
			fmt.Fprintln(out, string(b))
			continue
		}
		fmt.Fprintln(tw, strings.Join([]string{row["ID"], row["Name"], row["CPUPerc"], row["MemUsage"], row["MemPerc"], row["NetIO"], row["BlockIO"], row["PIDs"]}, "\t"))
	}
	if v.json {
		return nil
	}
	return tw.Flush()
}

// cpuPercent is docker stats's CPU %: the container's share of the
// host's CPU time between two samples, times its CPUs; where a runtime
// reports no host CPU time, its share of the wall time between them.
func cpuPercent(prev, cur engine.StatsSample) float64 {
	a, b := prev.Stats, cur.Stats
	used := b.CPUTotal - a.CPUTotal
	if used <= 0 || a.Time.IsZero() {
		return 0
	}
	if sys := b.SystemCPU - a.SystemCPU; sys > 0 {
		return float64(used) / float64(sys) * float64(max(b.OnlineCPUs, 1)) * 100
	}
	if wall := b.Time.Sub(a.Time); wall > 0 {
		return float64(used) / float64(wall) * 100
	}
	return 0
}
