package monitor

import (
	"context"
	"time"
)

// Wait blocks until the container in dir has exited for good and returns
// its final record (ExitCode, FinishedAt). A container never started
// (created, no monitor) returns at once; a monitor that died first is
// ErrNoMonitor; ctx ending returns the last record read with ctx.Err().
//
// It watches the record directory with inotify for a record renamed into
// it (not for log writes: a chatty container would wake it for nothing)
// and reads the record once a second regardless, since a monitor killed
// outright changes no file: prompt when the monitor finishes, and still
// right when it cannot.
func Wait(ctx context.Context, dir string) (Record, error) {
	w := watchDir(dir, recordChanges)
	defer w.stop()
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	for {
		r, err := ReadRecord(dir)
		if err != nil {
			return r, err
		}
		if r.Final() || r.Monitor.Pid == 0 {
			return r, nil
		}
		if !AliveIn(dir, r) {
			// It may have written its final record and exited since.
			if again, err := ReadRecord(dir); err == nil && again.Final() {
				return again, nil
			}
			return r, noMonitor(r)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-w.C:
		case <-tick.C:
		}
	}
}
