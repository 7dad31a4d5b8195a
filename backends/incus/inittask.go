package incus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"github.com/creack/pty"

	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// initTask is the monitor's Task inside the container: the monitor is the
// container's init (pid 1), so the main process and healthcheck probes
// are its own children, started with the container's identity and
// confinement (procConfig) and reaped by reaper together with every
// orphan the container leaves to pid 1.
type initTask struct {
	id     string // the container's record name
	proc   procConfig
	env    []string
	reaper *reaper
}

// helperCommand is how the init starts cmd confined: its own binary as
// the exec helper, which takes on the container's user, groups, working
// directory, capabilities and no-new-privileges, then execs cmd (same
// pid: the main process stays the init's child). The request travels in
// the helper's environment; the command gets the container's.
func (t *initTask) helperCommand(cmd []string, execFd int) (string, []string, []string, error) {
	req, err := json.Marshal(helperRequest{Op: "exec", Cmd: cmd, ExecFd: execFd})
	if err != nil {
		return "", nil, nil, err
	}
	return "/proc/self/exe", []string{"cornus", "monitor", HelperName, t.id}, []string{helperEnv + "=" + string(req)}, nil
}

var _ monitor.Task = (*initTask)(nil)

// Start runs the main process. When it exits, every other process of the
// container goes too (as when a container's pid 1 exits elsewhere), so
// each run starts in a clean container and no orphan holds its output.
func (t *initTask) Start(_ context.Context, stdio monitor.Stdio) (monitor.Process, error) {
	if len(t.proc.Args) == 0 {
		return nil, fmt.Errorf("no command: the image sets none and the spec gives no entrypoint or command: %w", errdefs.ErrInvalidArgument)
	}
	if _, err := lookPath(t.proc.Args[0], t.env); err != nil {
		return nil, err
	}
	path, args, env, err := t.helperCommand(t.proc.Args, 3)
	if err != nil {
		return nil, err
	}
	p := &mainProcess{done: make(chan syscall.WaitStatus, 1)}
	var copies sync.WaitGroup
	files, closeAfter, err := p.openStdio(t.proc.TTY, stdio, &copies)
	if err != nil {
		return nil, err
	}
	execR, execW, err := os.Pipe()
	if err != nil {
		for _, f := range closeAfter {
			f.Close()
		}
		p.closeOutput()
		copies.Wait()
		return nil, err
	}
	defer execR.Close()
	attr := &syscall.ProcAttr{
		Env: env, Files: append(files, execW.Fd()),
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: t.proc.TTY, Ctty: 0},
	}
	pid, err := t.reaper.start(path, args, attr, p.done)
	execW.Close()
	for _, f := range closeAfter {
		f.Close()
	}
	if err != nil {
		p.closeOutput()
		copies.Wait()
		return nil, fmt.Errorf("start %s: %w", t.proc.Args[0], err)
	}
	// Running once the helper became the command (the pipe's end closed
	// on exec), or failed to (it exits, closing it too): the monitor
	// reports the process running only then.
	_, _ = io.Copy(io.Discard, execR)
	p.pid, p.copies = pid, &copies
	return p, nil
}

// openStdio makes the main process's stdin, stdout and stderr: a terminal
// or pipes, copied to stdio by copies. It returns the files for the child
// and those to close once it started.
func (p *mainProcess) openStdio(tty bool, stdio monitor.Stdio, copies *sync.WaitGroup) (files []uintptr, closeAfter []*os.File, err error) {
	stdin, err := stdinFile(stdio.Stdin)
	if err != nil {
		return nil, nil, err
	}
	closeAfter = append(closeAfter, stdin)
	if tty {
		master, slave, err := pty.Open()
		if err != nil {
			stdin.Close()
			return nil, nil, fmt.Errorf("allocate a terminal: %w", err)
		}
		p.tty = master
		closeAfter = append(closeAfter, slave)
		files = []uintptr{slave.Fd(), slave.Fd(), slave.Fd()}
		copies.Go(func() { _, _ = io.Copy(stdio.Stdout, master) })
		if stdio.Stdin != nil {
			go func() { _, _ = io.Copy(master, stdio.Stdin) }()
		}
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			stdin.Close()
			return nil, nil, err
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			stdin.Close()
			outR.Close()
			outW.Close()
			return nil, nil, err
		}
		p.readers = []*os.File{outR, errR}
		closeAfter = append(closeAfter, outW, errW)
		files = []uintptr{stdin.Fd(), outW.Fd(), errW.Fd()}
		copies.Go(func() { _, _ = io.Copy(stdio.Stdout, outR) })
		copies.Go(func() { _, _ = io.Copy(stdio.Stderr, errR) })
	}
	return files, closeAfter, nil
}

// Exec runs a healthcheck probe with the main process's identity,
// environment and working directory; ctx ending kills it.
func (t *initTask) Exec(ctx context.Context, cmd []string, out io.Writer) (int, error) {
	if len(cmd) == 0 {
		return -1, fmt.Errorf("empty command: %w", errdefs.ErrInvalidArgument)
	}
	if _, err := lookPath(cmd[0], t.env); err != nil {
		return 127, nil // the probe's command is missing: a failing probe, as in Docker
	}
	path, args, env, err := t.helperCommand(cmd, 0)
	if err != nil {
		return -1, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		r.Close()
		w.Close()
		return -1, err
	}
	done := make(chan syscall.WaitStatus, 1)
	attr := &syscall.ProcAttr{Env: env, Files: []uintptr{null.Fd(), w.Fd(), w.Fd()},
		Sys: &syscall.SysProcAttr{Setpgid: true}}
	pid, err := t.reaper.start(path, args, attr, done)
	w.Close()
	null.Close()
	if err != nil {
		r.Close()
		return -1, fmt.Errorf("start probe %s: %w", cmd[0], err)
	}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, io.LimitReader(r, 1<<20)); _, _ = io.Copy(io.Discard, r); close(copied) }()
	var ws syscall.WaitStatus
	select {
	case ws = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		ws = <-done
	}
	// A probe's background children may hold the pipe: do not wait long.
	select {
	case <-copied:
	case <-time.After(200 * time.Millisecond):
	}
	r.Close()
	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	return exitCode(ws), nil
}

// stdinFile is the main process's stdin: the monitor's pipe (open stdin)
// or /dev/null.
func stdinFile(r io.Reader) (*os.File, error) {
	if f, ok := r.(*os.File); ok {
		return os.NewFile(uintptr(dupFd(f)), "stdin"), nil
	}
	return os.Open(os.DevNull)
}

func dupFd(f *os.File) int {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return -1
	}
	syscall.CloseOnExec(fd)
	return fd
}

// mainProcess is a started main process.
type mainProcess struct {
	pid     int
	done    chan syscall.WaitStatus
	tty     *os.File
	readers []*os.File
	copies  *sync.WaitGroup
}

func (p *mainProcess) Pid() int { return p.pid }

func (p *mainProcess) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Wait returns once the process exited and its output is copied; every
// other process of the container is killed first, so none keeps the
// output open.
func (p *mainProcess) Wait(ctx context.Context) (monitor.Exit, error) {
	var ws syscall.WaitStatus
	select {
	case ws = <-p.done:
	case <-ctx.Done():
		return monitor.Exit{}, ctx.Err()
	}
	_ = syscall.Kill(-1, syscall.SIGKILL) // everything but pid 1 itself
	copied := make(chan struct{})
	go func() { p.copies.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		p.closeOutput()
		<-copied
	}
	p.closeOutput()
	return monitor.Exit{Code: exitCode(ws)}, nil
}

func (p *mainProcess) closeOutput() {
	for _, f := range p.readers {
		f.Close()
	}
	if p.tty != nil {
		p.tty.Close()
	}
}

// Resize sizes the main process's terminal.
func (p *mainProcess) Resize(width, height uint32) error {
	if p.tty == nil {
		return fmt.Errorf("resize: the container has no terminal: %w", errdefs.ErrFailedPrecondition)
	}
	return pty.Setsize(p.tty, &pty.Winsize{Cols: uint16(width), Rows: uint16(height)})
}

// exitCode is Docker's: the status, or 128+N when killed by signal N.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// reaper reaps every child of pid 1: the ones it started (their status
// goes to whoever waits for them) and the orphans the container leaves
// behind. Nothing else in the init may wait for children.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan syscall.WaitStatus
}

func newReaper() *reaper {
	r := &reaper{waiting: map[int]chan syscall.WaitStatus{}}
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		for range sig {
			r.reap()
		}
	}()
	return r
}

// start starts a process and registers done for its status; the lock
// keeps the reaper from taking the status before it is registered.
func (r *reaper) start(path string, args []string, attr *syscall.ProcAttr, done chan syscall.WaitStatus) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := syscall.ForkExec(path, args, attr)
	if err != nil {
		return 0, err
	}
	r.waiting[pid] = done
	return pid, nil
}

func (r *reaper) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		r.mu.Lock()
		if ch, ok := r.waiting[pid]; ok {
			delete(r.waiting, pid)
			ch <- ws
		}
		r.mu.Unlock()
	}
}

// lookPath finds a command the way execvp does, on the PATH of env.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("exec %s: %w", name, err)
		}
		return name, nil
	}
	path, _ := envlist.Lookup(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec %s: executable file not found in $PATH: %w", name, errdefs.ErrNotFound)
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s: permission denied: %w", p, errdefs.ErrPermissionDenied)
	}
	return nil
}
