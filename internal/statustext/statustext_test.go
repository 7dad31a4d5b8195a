package statustext

import (
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// TestRoundTrip: what Docker renders, Parse reads back, and Docker renders
// again the same (the contract carries typed state; text lives here).
func TestRoundTrip(t *testing.T) {
	now := time.Now()
	for _, c := range []backends.Container{
		{State: backends.StateRunning, StartedAt: now.Add(-3 * time.Second)},
		{State: backends.StateRunning, StartedAt: now.Add(-90 * time.Second), Health: backends.HealthHealthy},
		{State: backends.StateRunning, StartedAt: now.Add(-5 * time.Hour), Health: backends.HealthStarting},
		{State: backends.StatePaused, StartedAt: now.Add(-2 * time.Minute)},
		{State: backends.StateExited, ExitCode: 137, FinishedAt: now.Add(-10 * time.Minute)},
		{State: backends.StateRestarting, ExitCode: 1, FinishedAt: now.Add(-2 * time.Second)},
		{State: backends.StateCreated},
	} {
		text := Docker(c, now)
		p := Parse(text)
		back := backends.Container{State: c.State, Health: p.Health, ExitCode: p.ExitCode, StartedAt: now.Add(-p.Up), FinishedAt: now.Add(-p.Since)}
		if again := Docker(back, now); again != text {
			t.Errorf("%q read back renders %q", text, again)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"Up 3 seconds", "Exited (0) 2 minutes ago", "Up About an hour (healthy)", "Restarting (1) 1 second ago", "Created"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _ = Parse(s) })
}
