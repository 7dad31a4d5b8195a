package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
)

// ErrNoMonitor means the record says the container is supervised but its
// monitor is gone (killed, or the host rebooted). Nothing will restart,
// probe or stop it: the backend kills the task itself and records the
// exit. It is an errdefs Unavailable.
var ErrNoMonitor = fmt.Errorf("%w: the container's monitor is gone", errdefs.ErrUnavailable)

// finishGrace is how long a client waits for a monitor that no longer
// listens but still runs: one writing its final record.
const finishGrace = 5 * time.Second

// StopOptions bound a graceful stop.
type StopOptions struct {
	Signal  syscall.Signal // 0: the record's stop signal, else SIGTERM
	Timeout *time.Duration // nil: the record's grace, else 10 s
}

// Stop asks the monitor in dir to stop the container for good (no
// restart): it sends the signal, SIGKILLs at the grace, and returns the
// final record once the process has exited. A container that is not
// supervised (exited, or created and never started) is no error;
// ErrNoMonitor says its monitor died while it ran.
func Stop(ctx context.Context, dir string, o StopOptions) (Record, error) {
	r, answered, err := call(ctx, dir, request{Op: opStop, Signal: o.Signal, Timeout: o.Timeout})
	if answered || ctx.Err() != nil {
		return r, err
	}
	return settle(ctx, dir)
}

// Kill sends sig to the main process through its monitor. SIGKILL and the
// stop signal also keep the container stopped, as docker kill does.
// A container that is not running is an errdefs Conflict.
func Kill(ctx context.Context, dir string, sig syscall.Signal) (Record, error) {
	r, answered, err := call(ctx, dir, request{Op: opKill, Signal: sig})
	if answered || ctx.Err() != nil {
		return r, err
	}
	if r, err = settle(ctx, dir); err != nil {
		return r, err
	}
	return r, fmt.Errorf("%w: container %s is not running", errdefs.ErrConflict, r.ID)
}

// Status returns the monitor's current record, or the record on disk when
// no monitor answers (with ErrNoMonitor if one should have).
func Status(ctx context.Context, dir string) (Record, error) {
	r, answered, err := call(ctx, dir, request{Op: opStatus})
	if answered || ctx.Err() != nil {
		return r, err
	}
	return settle(ctx, dir)
}

// call sends one request; answered is false when no monitor took it.
func call(ctx context.Context, dir string, req request) (Record, bool, error) {
	c, err := dial(ctx, dir)
	if err != nil {
		return Record{}, false, err
	}
	defer c.Close()
	// A stop answers only once the container has exited: ctx bounds it.
	defer context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })()
	var resp response
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return Record{}, false, ctxErr(ctx, err)
	}
	if err := json.NewDecoder(io.LimitReader(c, 16<<20)).Decode(&resp); err != nil {
		return Record{}, false, ctxErr(ctx, err) // the monitor died mid-request
	}
	var r Record
	if resp.Record != nil {
		r = *resp.Record
	}
	if resp.Error != "" {
		return r, true, fromRemote(resp.Error, resp.Kind)
	}
	return r, true, nil
}

// dial connects to the monitor of the record in dir.
func dial(ctx context.Context, dir string) (net.Conn, error) {
	addr, release, err := socketAddr(filepath.Join(dir, socketName))
	if err != nil {
		return nil, err
	}
	defer release()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	return c, nil
}

// ctxErr prefers ctx's error: a deadline the caller set explains a
// failed call better than the socket's symptom.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// settle finds out from the record why no monitor answered: none was
// needed (final, or never started), one is finishing (its final record
// comes within finishGrace), or it is gone (ErrNoMonitor).
func settle(ctx context.Context, dir string) (Record, error) {
	r, err := ReadRecord(dir)
	if err != nil {
		return r, err
	}
	if r.Final() || r.Monitor.Pid == 0 {
		return r, nil
	}
	if !AliveIn(dir, r) {
		return r, noMonitor(r)
	}
	wctx, cancel := context.WithTimeout(ctx, finishGrace)
	defer cancel()
	r, err = Wait(wctx, dir)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return r, fmt.Errorf("%w: container %s: monitor pid %d runs but does not answer on %s", errdefs.ErrUnavailable, r.ID, r.Monitor.Pid, socketName)
	}
	return r, err
}

func noMonitor(r Record) error {
	return fmt.Errorf("container %s (monitor pid %d): %w", r.ID, r.Monitor.Pid, ErrNoMonitor)
}
