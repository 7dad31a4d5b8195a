package backendtest

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// rolloutEvent is one replica's stamp: "start" or "stop", its config
// version, its host name and the host-wide clock.
type rolloutEvent struct {
	what, version, host string
	at                  float64
}

func (e rolloutEvent) String() string {
	return fmt.Sprintf("%.2f %s v%s %s", e.at, e.what, e.version, e.host)
}

// readRollout parses the stamps file, in time order (at the same clock
// tick, starts first).
func readRollout(file string) ([]rolloutEvent, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []rolloutEvent
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("stamp %q: want what, version, host, clock", line)
		}
		at, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return nil, fmt.Errorf("stamp %q: %v", line, err)
		}
		out = append(out, rolloutEvent{what: f[0], version: f[1], host: f[2], at: at})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].at != out[j].at {
			return out[i].at < out[j].at
		}
		return out[i].what == "start" && out[j].what == "stop"
	})
	return out, nil
}

func countEvents(events []rolloutEvent, what, version string) int {
	n := 0
	for _, e := range events {
		if e.what == what && e.version == version {
			n++
		}
	}
	return n
}

// checkRollout checks a start-first rollout of replicas in batches of
// batch, each replica ready ready seconds after it starts: from the first
// new start on never fewer than replicas alive, the first batch's starts
// together (within half of ready) and the next start only after them
// (three quarters of ready later at least). "" when it holds.
func checkRollout(events []rolloutEvent, replicas, batch int, ready float64) string {
	alive, rolling := 0, false
	var starts []float64
	for _, e := range events {
		switch e.what {
		case "start":
			alive++
			if e.version != "1" {
				rolling = true
				starts = append(starts, e.at)
			}
		case "stop":
			alive--
		}
		if rolling && alive < replicas {
			return fmt.Sprintf("at %.2f only %d replicas alive: an old one stopped before its replacement was up (not start-first)", e.at, alive)
		}
	}
	if len(starts) <= batch {
		return fmt.Sprintf("%d new replicas started, want more than a batch of %d", len(starts), batch)
	}
	if d := starts[batch-1] - starts[0]; d > ready/2 {
		return fmt.Sprintf("the first %d new replicas started %.2f s apart: not one batch", batch, d)
	}
	if d := starts[batch] - starts[0]; d < ready*3/4 {
		return fmt.Sprintf("new replica %d started %.2f s after the first, before the first batch of %d was ready (%.0f s)", batch+1, d, batch, ready)
	}
	return ""
}
