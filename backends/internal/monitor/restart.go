package monitor

import (
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// Docker's restart manager delays (moby restartmanager): 100 ms, doubled
// on each restart, capped at a minute, back to 100 ms once a run lasted
// 10 s.
const (
	backoffStart      = 100 * time.Millisecond
	backoffMax        = time.Minute
	backoffResetAfter = 10 * time.Second
)

// nextBackoff is the delay before the next restart, given the previous
// delay (0: none yet) and how long the run that just ended lasted.
func nextBackoff(prev, ran time.Duration) time.Duration {
	if ran >= backoffResetAfter {
		prev = 0
	}
	switch {
	case prev <= 0:
		return backoffStart
	case prev >= backoffMax/2:
		return backoffMax
	}
	return 2 * prev
}

// shouldRestart applies a restart policy to an exit: restarts is how many
// restarts this monitor did already, stopped whether a stop was asked
// for. always and unless-stopped differ only across a reboot, which this
// monitor does not outlive: both restart until stopped.
func shouldRestart(p RestartPolicy, exitCode, restarts int, stopped bool) bool {
	if stopped {
		return false
	}
	switch p.Name {
	case spec.RestartAlways, spec.RestartUnlessStopped:
		return true
	case spec.RestartOnFailure:
		return exitCode != 0 && (p.MaxRetries == 0 || restarts < p.MaxRetries)
	}
	return false
}
