package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/journal"
)

// RunOptions are what the monitor process needs: the record (written by
// Spawn) says everything else.
type RunOptions struct {
	Store *Store
	ID    string
	Task  Task
}

// Run supervises container o.ID until its main process exits for good,
// then writes the final record and returns. It is the body of the
// detached monitor process (Spawn starts it): it starts the task, copies
// its output into container.log, runs healthchecks, restarts it by
// policy and serves stop/kill/status on monitor.sock in the record
// directory. When ctx ends (the monitor was told to quit) it stops the
// container as a stop would, leaving the desired state as it was, and
// returns ctx.Err().
//
// The readiness report Spawn waits for goes out once the first start
// succeeded or failed; Run finds the pipe through ReadyEnv.
func Run(ctx context.Context, o RunOptions) error {
	ready := readyFromEnv()
	m, err := newMonitor(o)
	if err != nil {
		ready.report(0, err)
		return err
	}
	return m.run(ctx, ready)
}

// monitor is one running Run.
type monitor struct {
	store  *Store
	task   Task
	dir    string
	log    *logFile
	stdout *lineWriter
	stderr *lineWriter
	ln     net.Listener
	served chan struct{} // closed when the accept loop has returned
	hub    hub           // attached clients of the current run

	mu        sync.Mutex
	rec       Record
	proc      Process // the current run's process; nil between runs
	gen       int     // counts runs, so late timers and probes spot a stale run
	quitting  bool    // ctx ended: stop, restart no more, leave Desired alone
	stopSig   syscall.Signal
	stopGrace time.Duration
	writeErr  error    // the first record write that failed
	stdin     *os.File // the current run's stdin writer (OpenStdin)
	wake      chan struct{}
	done      chan struct{} // closed once the record is final

	handlers sync.WaitGroup
}

func newMonitor(o RunOptions) (*monitor, error) {
	if o.Store == nil || o.Task == nil {
		return nil, fmt.Errorf("%w: monitor: a store and a task are required", errdefs.ErrInvalidArgument)
	}
	dir, err := o.Store.Dir(o.ID)
	if err != nil {
		return nil, err
	}
	rec, err := o.Store.Read(o.ID)
	if err != nil {
		return nil, err
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	self := os.Getpid()
	if rec.Monitor.Pid != self && !rec.Final() && Alive(rec) {
		return nil, fmt.Errorf("%w: container %s is supervised already, by monitor pid %d", errdefs.ErrConflict, rec.ID, rec.Monitor.Pid)
	}
	ticks, _, err := processStart(self)
	if err != nil {
		return nil, fmt.Errorf("monitor: own start time: %w", err)
	}
	files := logFiles(dir)
	lf, err := openLogFile(files.Container, files.Rotated, rec.Supervision.LogMaxBytes)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", rec.ID, err)
	}
	ln, err := listen(filepath.Join(dir, socketName))
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("container %s: %w", rec.ID, err)
	}
	rec.Desired = DesiredRunning
	rec.State = State{Status: StatusCreated}
	// Pid 1: the init of a container's pid namespace (the incus backend).
	rec.Monitor = MonitorProcess{Pid: self, StartTicks: ticks, StartedAt: time.Now().UTC(), Socket: filepath.Join(dir, socketName), Namespaced: self == 1}
	rec.Logs = files
	m := &monitor{
		store: o.Store, task: o.Task, dir: dir, log: lf, ln: ln, rec: rec,
		stdout: newLineWriter(StreamStdout, lf), stderr: newLineWriter(StreamStderr, lf),
		served: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	m.stopSig, m.stopGrace = m.stopDefaults(0, nil)
	if err := m.store.Write(rec); err != nil {
		m.closeSocket()
		lf.Close()
		return nil, err
	}
	return m, nil
}

func logFiles(dir string) LogFiles {
	return LogFiles{
		Container: filepath.Join(dir, logName),
		Rotated:   filepath.Join(dir, rotatedName),
		Monitor:   filepath.Join(dir, monitorLogName),
	}
}

// listen binds the control socket, replacing a stale one a killed monitor
// left, readable by the owner only.
func listen(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	addr, release, err := socketAddr(path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	defer release()
	ln, err := net.Listen("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// The address may be a /proc alias, gone once released: remove the
	// socket by its real path ourselves.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

func (m *monitor) run(ctx context.Context, ready *readyPipe) error {
	go m.serve()
	stopQuit := context.AfterFunc(ctx, func() { m.requestStop(0, nil, true) })
	defer stopQuit()

	hc := m.rec.Supervision.Healthcheck
	var backoff time.Duration
	for first := true; !m.stopping(); first = false {
		began := time.Now()
		proc, err := m.start(ctx)
		exit := Exit{Code: 128} // Docker's code for a container that could not start
		switch {
		case err != nil && first:
			err = fmt.Errorf("start container %s: %w", m.rec.ID, err)
			m.setExit(exit, err)
			m.finish(StatusExited)
			ready.report(0, err)
			return err
		case err != nil:
			// A failed restart counts as a failed run: the policy decides.
			err = fmt.Errorf("restart container %s: %w", m.rec.ID, err)
		default:
			gen := m.running(proc, began, hc)
			if first {
				ready.report(proc.Pid(), nil)
			}
			exit, err = m.supervise(ctx, proc, gen, began, hc)
			if err != nil {
				err = fmt.Errorf("wait for container %s: %w", m.rec.ID, err)
				m.setExit(exit, err)
				m.finish(StatusDead)
				return err
			}
		}
		delay, restart := m.exited(exit, err, time.Since(began), &backoff)
		if !restart {
			break
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-m.wake: // a stop: the loop condition ends it
		}
		t.Stop()
	}
	m.finish(StatusExited)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.quitting {
		return ctx.Err()
	}
	return m.writeErr
}

// start starts one run with its output going to the log and attached
// clients, and its own stdin when the container keeps stdin open.
func (m *monitor) start(ctx context.Context) (Process, error) {
	stdin, closeStdin, err := m.stdinFor()
	if err != nil {
		return nil, err
	}
	proc, err := m.task.Start(ctx, Stdio{Stdin: stdin,
		Stdout: teeWriter{hub: &m.hub, stream: 1, w: m.stdout}, Stderr: teeWriter{hub: &m.hub, stream: 2, w: m.stderr}})
	if err != nil {
		closeStdin()
		return nil, err
	}
	return endRun{Process: proc, end: func() { closeStdin(); m.hub.closeAll() }}, nil
}

// endRun releases a run's stdin and attachments once its process is
// waited for.
type endRun struct {
	Process
	end func()
}

func (e endRun) Wait(ctx context.Context) (Exit, error) {
	x, err := e.Process.Wait(ctx)
	e.end()
	return x, err
}

func (e endRun) Resize(w, h uint32) error {
	if r, ok := e.Process.(resizer); ok {
		return r.Resize(w, h)
	}
	return fmt.Errorf("%w: resize: not supported by this runtime", errdefs.ErrNotImplemented)
}

// running records a started process; it returns the run's generation.
func (m *monitor) running(proc Process, began time.Time, hc *Healthcheck) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.proc = proc
	s := &m.rec.State
	s.Status, s.Pid, s.StartedAt = StatusRunning, proc.Pid(), began.UTC()
	s.ExitCode, s.Error, s.OOMKilled, s.Health = 0, "", false, nil
	if _, enabled, _ := hcCommand(hc); enabled {
		s.Health = &Health{Status: HealthStarting}
	}
	m.persistLocked()
	m.eventLocked("start", nil)
	if m.stoppingLocked() {
		// A stop came in while the process was being started.
		m.signalLocked(m.stopSig, m.stopGrace)
	}
	return m.gen
}

// supervise waits for the process while probing its health, then writes
// out a partial last line.
func (m *monitor) supervise(ctx context.Context, proc Process, gen int, began time.Time, hc *Healthcheck) (Exit, error) {
	hctx, cancel := context.WithCancel(ctx)
	var probes sync.WaitGroup
	if cmd, enabled, _ := hcCommand(hc); enabled {
		probes.Go(func() { m.watchHealth(hctx, gen, began, *hc, cmd) })
	}
	// Not ctx: quitting stops the process through requestStop, and the
	// exit still has to be waited for and recorded.
	exit, err := proc.Wait(context.WithoutCancel(ctx))
	cancel()
	probes.Wait()
	m.stdout.Flush()
	m.stderr.Flush()
	return exit, err
}

// setExit records how the process ended (err: it could not start or be
// waited for).
func (m *monitor) setExit(exit Exit, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setExitLocked(exit, err)
}

func (m *monitor) setExitLocked(exit Exit, err error) {
	m.proc = nil
	s := &m.rec.State
	s.Pid, s.ExitCode, s.OOMKilled, s.FinishedAt = 0, exit.Code, exit.OOMKilled, time.Now().UTC()
	s.Error = ""
	if err != nil {
		s.Error = err.Error()
	}
}

// exited records an exit (or a failed restart, err) and decides on a
// restart, advancing the backoff.
func (m *monitor) exited(exit Exit, err error, ran time.Duration, backoff *time.Duration) (delay time.Duration, restart bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setExitLocked(exit, err)
	m.eventLocked("die", &exit.Code)
	s := &m.rec.State
	restart = shouldRestart(m.rec.Supervision.Restart, exit.Code, s.RestartCount, m.stoppingLocked())
	if !restart {
		return 0, false // finish writes the final record
	}
	*backoff = nextBackoff(*backoff, ran)
	s.RestartCount++
	s.Status = StatusRestarting
	m.persistLocked()
	return *backoff, true
}

// finish ends supervision: no more requests, the output closed, then the
// final record (with no monitor in it) written last, so whoever sees it
// final finds every line in the log. Then it answers waiting stops.
func (m *monitor) finish(status string) {
	m.closeSocket()
	<-m.served
	m.stdout.Flush()
	m.stderr.Flush()
	logErr := m.log.Close()
	m.mu.Lock()
	m.rec.State.Status = status
	m.rec.State.Pid = 0
	m.rec.Monitor = MonitorProcess{}
	if logErr != nil && m.rec.State.Error == "" {
		m.rec.State.Error = logErr.Error()
	}
	m.persistLocked()
	close(m.done)
	m.mu.Unlock()
	// Let answers reach their clients before the process exits; a client
	// that stopped reading cannot hold the monitor up for long.
	waited := make(chan struct{})
	go func() { m.handlers.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
	}
}

func (m *monitor) closeSocket() {
	m.ln.Close()
	os.Remove(filepath.Join(m.dir, socketName))
}

func (m *monitor) stopping() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stoppingLocked()
}

func (m *monitor) stoppingLocked() bool {
	return m.quitting || m.rec.Desired == DesiredStopped
}

// eventLocked appends a container event to the backend's journal, if it
// keeps one; a journal that cannot be written loses the event, not the
// container.
func (m *monitor) eventLocked(action string, exitCode *int) {
	if m.rec.Supervision.Events == "" {
		return
	}
	e := journal.Event{Action: action, ID: m.rec.ID, Name: m.rec.Name, Image: m.rec.Image, Labels: m.rec.Labels}
	if exitCode != nil {
		code := *exitCode
		e.ExitCode = &code
	}
	_ = journal.Open(m.rec.Supervision.Events).Append(e)
}

// persistLocked writes the record; a failure is kept for Run's result
// but does not stop supervision (status still answers from memory).
func (m *monitor) persistLocked() {
	if err := m.store.Write(m.rec); err != nil && m.writeErr == nil {
		m.writeErr = err
	}
}

func hcCommand(hc *Healthcheck) ([]string, bool, error) {
	if hc == nil {
		return nil, false, nil
	}
	return hc.command()
}
