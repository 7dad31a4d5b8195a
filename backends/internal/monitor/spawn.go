package monitor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
)

// ReadyEnv is the environment variable through which Spawn tells the
// monitor process which descriptor its readiness pipe is.
const ReadyEnv = "CORNUS_MONITOR_READY_FD"

// SpawnOptions say which container to supervise and how to start the
// monitor process.
type SpawnOptions struct {
	Store *Store
	// Record holds the identity and Supervision; its state is reset.
	Record Record
	// Path and Args start the monitor: normally os.Executable() and a
	// hidden subcommand that calls Run for Record.ID.
	Path string
	Args []string
	Env  []string // nil: this process's environment
}

// Spawn writes a fresh record (created, desired running) and starts a
// monitor for it, detached: its own session, stdio on /dev/null and
// monitor.log, working directory /, so it outlives this process and no
// terminal signal reaches it. It returns once the monitor reports the
// main process started, with the record then, or why it did not start
// (the record says so too). If ctx ends first the monitor carries on;
// Stop undoes it. A container whose monitor still runs is a Conflict.
func Spawn(ctx context.Context, o SpawnOptions) (Record, error) {
	if o.Store == nil || o.Path == "" {
		return Record{}, fmt.Errorf("%w: spawn monitor: a store and an executable are required", errdefs.ErrInvalidArgument)
	}
	r := o.Record
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	dir, _ := o.Store.Dir(r.ID)
	// The supervision lock: held from here by this process, then by the
	// monitor for its whole life (it inherits the locked descriptor), so
	// two Spawns racing for one container (a cornus killed mid-start and
	// the next one) cannot both start a monitor.
	lock, err := lockSupervision(ctx, dir, r.ID)
	if err != nil {
		prev, _ := ReadRecord(dir)
		return prev, err
	}
	defer lock.Close()
	prev, err := ReadRecord(dir)
	switch {
	case err == nil && !prev.Final() && AliveIn(dir, prev):
		return prev, fmt.Errorf("%w: container %s is supervised already, by monitor pid %d", errdefs.ErrConflict, r.ID, prev.Monitor.Pid)
	case err != nil && !errdefs.IsNotFound(err):
		return Record{}, err
	}
	r.Desired = DesiredRunning
	r.State = State{Status: StatusCreated}
	r.Monitor = MonitorProcess{}
	r.Logs = logFiles(dir)
	if err := o.Store.Write(r); err != nil {
		return Record{}, err
	}
	pr, err := startMonitor(dir, o, lock)
	if err != nil {
		r.State = State{Status: StatusExited, ExitCode: 128, Error: err.Error(), FinishedAt: time.Now().UTC()}
		_ = o.Store.Write(r) // best effort: the start's error is the one to report
		return r, err
	}
	rep, err := readReady(ctx, pr)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("monitor for container %s exited before starting it%s", r.ID, monitorLogTail(dir))
		}
		got, _ := o.Store.Read(r.ID)
		return got, err
	}
	got, err := o.Store.Read(r.ID)
	if rep.Error != "" {
		return got, fromRemote(rep.Error, rep.Kind)
	}
	return got, err
}

// lockSupervision takes dir's supervision lock, or says a monitor (or a
// Spawn) holds it. A monitor whose record is final (its container stopped)
// is on its way out: the lock is waited for, for up to lockWait, so a start
// right after a stop starts the container again.
func lockSupervision(ctx context.Context, dir, id string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("monitor lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("monitor lock: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("monitor lock: %w", err)
		}
		prev, rerr := ReadRecord(dir)
		if rerr != nil || !prev.Final() || time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, fmt.Errorf("%w: container %s is supervised already (its monitor, or another start, holds %s)", errdefs.ErrConflict, id, lockName)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockWait bounds the wait for an exiting monitor's supervision lock.
const lockWait = 5 * time.Second

func startMonitor(dir string, o SpawnOptions, lock *os.File) (*os.File, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("spawn monitor: %w", err)
	}
	defer pw.Close()
	logf, err := os.OpenFile(filepath.Join(dir, monitorLogName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("spawn monitor: %w", err)
	}
	defer logf.Close()
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(withoutVar(env, ReadyEnv), ReadyEnv+"=3") // ExtraFiles[0]
	cmd := &exec.Cmd{
		Path:        o.Path,
		Args:        append([]string{o.Path}, o.Args...),
		Env:         env,
		Dir:         "/", // hold no directory of the caller's busy
		Stdout:      logf,
		Stderr:      logf,
		ExtraFiles:  []*os.File{pw, lock}, // fd 4: the supervision lock, held while the monitor lives
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		return nil, fmt.Errorf("spawn monitor %s: %w", o.Path, err)
	}
	// Reap it if it ends while this process lives (a long-lived proxy
	// spawns many); if this process ends first, init adopts it. Nothing
	// waits for this.
	go func() { _ = cmd.Wait() }()
	return pr, nil
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// readyReport is the one line a monitor writes on its readiness pipe.
type readyReport struct {
	Pid   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// readReady reads the report; io.EOF means the monitor exited (or closed
// the pipe) without one.
func readReady(ctx context.Context, pr *os.File) (readyReport, error) {
	defer pr.Close()
	// A pipe is pollable: the deadline ends the read when ctx does.
	defer context.AfterFunc(ctx, func() { _ = pr.SetReadDeadline(time.Now()) })()
	line, err := bufio.NewReader(io.LimitReader(pr, 64<<10)).ReadBytes('\n')
	if err != nil {
		if ctx.Err() != nil {
			return readyReport{}, fmt.Errorf("wait for the monitor to start the container: %w", ctx.Err())
		}
		if len(line) == 0 || errors.Is(err, io.EOF) {
			return readyReport{}, io.EOF
		}
		return readyReport{}, fmt.Errorf("read monitor readiness: %w", err)
	}
	var rep readyReport
	if err := json.Unmarshal(line, &rep); err != nil {
		return readyReport{}, fmt.Errorf("read monitor readiness: %w", err)
	}
	return rep, nil
}

// monitorLogTail quotes the end of monitor.log: why a monitor died early.
func monitorLogTail(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, monitorLogName))
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return ""
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 1024 {
		s = "..." + s[len(s)-1024:]
	}
	return ": " + s
}

// readyPipe is the monitor's end of Spawn's pipe (nil when Run was not
// spawned: then there is nobody to tell).
type readyPipe struct {
	f    *os.File
	once sync.Once
}

func readyFromEnv() *readyPipe {
	fd, err := strconv.Atoi(os.Getenv(ReadyEnv))
	if err != nil || fd < 3 {
		return nil
	}
	// The task's processes must not inherit the pipe: Spawn would then
	// wait for them instead of for this report.
	syscall.CloseOnExec(fd)
	os.Unsetenv(ReadyEnv)
	// The supervision lock comes next (fd+1): kept, but not passed on.
	syscall.CloseOnExec(fd + 1)
	return &readyPipe{f: os.NewFile(uintptr(fd), "monitor-ready")}
}

func (p *readyPipe) report(pid int, err error) {
	if p == nil {
		return
	}
	p.once.Do(func() {
		rep := readyReport{Pid: pid}
		if err != nil {
			rep.Error, rep.Kind = err.Error(), errKind(err)
		}
		_ = json.NewEncoder(p.f).Encode(rep) // the spawner may be gone: no one to tell
		p.f.Close()
	})
}
