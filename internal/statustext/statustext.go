// Package statustext renders a container's typed state as Docker's human
// status line ("Up 3 seconds (healthy)", "Exited (0) 2 minutes ago") for
// the edges — the CLI's ps and the proxy's container list — and reads such
// a line back into an age, for runtimes that report only the text. The
// backend contract itself stores typed state only.
package statustext

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"

	"github.com/cornus-dev/cornus/backends"
)

// Docker is c's status as docker ps shows it, at time now.
func Docker(c backends.Container, now time.Time) string {
	switch c.State {
	case backends.StatePaused:
		return "Up " + units.HumanDuration(now.Sub(c.StartedAt)) + " (Paused)"
	case backends.StateRestarting:
		return fmt.Sprintf("Restarting (%d) %s ago", c.ExitCode, units.HumanDuration(now.Sub(c.FinishedAt)))
	case backends.StateRunning:
		up := "Up " + units.HumanDuration(now.Sub(c.StartedAt))
		switch c.Health {
		case backends.HealthStarting:
			return up + " (health: starting)"
		case backends.HealthHealthy, backends.HealthUnhealthy:
			return up + " (" + string(c.Health) + ")"
		}
		return up
	case backends.StateRemoving:
		return "Removal In Progress"
	case backends.StateDead:
		return "Dead"
	case backends.StateCreated:
		return "Created"
	}
	if c.FinishedAt.IsZero() {
		return fmt.Sprintf("Exited (%d)", c.ExitCode)
	}
	return fmt.Sprintf("Exited (%d) %s ago", c.ExitCode, units.HumanDuration(now.Sub(c.FinishedAt)))
}

var (
	upRE     = regexp.MustCompile(`^Up (.+?)(?: \((?:Paused|healthy|unhealthy|health: starting)\))?$`)
	exitedRE = regexp.MustCompile(`^(?:Exited|Restarting) \((-?\d+)\) (.+) ago$`)
	healthRE = regexp.MustCompile(`\((healthy|unhealthy|health: starting)\)$`)
	countRE  = regexp.MustCompile(`^(\d+) (second|minute|hour|day|week|month|year)s?$`)
)

// Parsed is what a status line says.
type Parsed struct {
	Up       time.Duration // for Up and Paused lines: how long it has run
	Since    time.Duration // for Exited and Restarting lines: how long ago it stopped
	ExitCode int
	Health   backends.Health
}

// Parse reads a docker ps status line (approximately: go-units rounds).
func Parse(s string) Parsed {
	var p Parsed
	if m := healthRE.FindStringSubmatch(s); m != nil {
		p.Health = backends.Health(strings.TrimPrefix(m[1], "health: "))
	}
	if m := upRE.FindStringSubmatch(s); m != nil {
		p.Up = age(m[1])
	}
	if m := exitedRE.FindStringSubmatch(s); m != nil {
		p.ExitCode, _ = strconv.Atoi(m[1])
		p.Since = age(m[2])
	} else if strings.HasPrefix(s, "Exited (") {
		p.ExitCode, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(s, "Exited ("), ")"))
	}
	return p
}

// age inverts go-units' HumanDuration.
func age(s string) time.Duration {
	switch s {
	case "Less than a second":
		return 0
	case "About a minute":
		return time.Minute
	case "About an hour":
		return time.Hour
	}
	m := countRE.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{
		"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
		"week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour,
	}[m[2]]
	return time.Duration(n) * unit
}
