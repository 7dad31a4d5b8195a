package bare

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

// reconcile runs when a cornus command opens the backend, for every
// container that should run (its record says desired running and not
// final) but has no live monitor:
//   - it still runs in the runtime (its monitor was killed): a new
//     monitor adopts it (adopt.go) — its output FIFOs are read again, its
//     healthchecks and restart policy resume;
//   - the runtime has it no more (a host reboot, or a kill of both):
//     those whose restart policy restarts them (always, unless-stopped,
//     on-failure) start again under a new monitor, which mounts their root
//     and rebuilds their network namespace from container.json (ready.go);
//     the others are recorded as exited, as Docker leaves them after a
//     daemon restart.
func (b *Backend) reconcile(ctx context.Context) error {
	recs, err := b.Records.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range recs {
		if r.Final() || r.Desired != monitor.DesiredRunning || monitor.Alive(r) || r.State.Status == monitor.StatusCreated && r.Monitor.Pid == 0 {
			continue
		}
		if _, err := os.Stat(b.cfg.ContainerDir(r.ID)); err != nil {
			continue // removed, or half-made: removeHalfMade's
		}
		rs, err := b.rt.state(ctx, r.ID)
		switch {
		case err == nil && (rs.Status == "running" || rs.Status == "paused"):
			if err := b.Start(ctx, r.ID); err != nil {
				errs = append(errs, fmt.Errorf("adopt %s after its monitor died: %w", r.Name, err))
			}
			continue
		case err == nil || !isNotFound(err):
			continue // stopped or half-made in the runtime: its next start redoes it
		}
		switch r.Supervision.Restart.Name {
		case spec.RestartAlways, spec.RestartUnlessStopped, spec.RestartOnFailure:
			if err := b.Start(ctx, r.ID); err != nil {
				errs = append(errs, fmt.Errorf("restart %s after its supervision was lost: %w", r.Name, err))
			}
		default:
			r.State.Status, r.State.Pid, r.State.FinishedAt = monitor.StatusExited, 0, time.Now().UTC()
			if r.State.ExitCode == 0 {
				r.State.ExitCode = 255
			}
			r.State.Error = "its supervision was lost (host reboot?) and its restart policy does not restart it"
			r.Desired, r.Monitor = monitor.DesiredStopped, monitor.MonitorProcess{}
			_ = b.Records.Write(r)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("reconcile: %v", errs)
	}
	return nil
}
