package bare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// RunMonitor is the body of `cornus monitor bare ID`: it supervises the
// container (daemonless.Core.Supervise: the monitor and, unless
// CORNUS_BARE_DNS=false, DNS on its networks' gateways) as the parent of
// its runtime and, through the child-subreaper bit, of its init, reaping
// the orphans the runtime leaves it (reaper.go).
func RunMonitor(ctx context.Context, environ []string, id string) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("monitor: become a child subreaper: %w", err)
	}
	b, err := New(ctx, WithEnviron(environ), func(o *options) { o.monitor = true })
	if err != nil {
		return err
	}
	defer b.Close()
	task, err := b.MonitorTask(ctx, id)
	if err != nil {
		return err
	}
	reapCtx, stopReaping := context.WithCancel(ctx)
	defer stopReaping()
	mt := task.(*monitorTask)
	go reapOrphans(reapCtx, &mt.starting, mt.initPid)
	return b.Supervise(ctx, id, task)
}

// MonitorTask is the container as its monitor drives it: the monitor (a
// child subreaper) runs `runc create` and `runc start`, so the
// container's init becomes its child once runc exits, and it waits for it
// through a pidfd.
func (b *Backend) MonitorTask(_ context.Context, id string) (monitor.Task, error) {
	st, err := b.Store().Read(id)
	if err != nil {
		return nil, err
	}
	return &monitorTask{b: b, st: st}, nil
}

type monitorTask struct {
	b   *Backend
	st  records.Container
	pid atomic.Int64 // the current init's, for the orphan reaper
	// starting is held while a start has an init the reaper must not
	// take for an orphan before its pid is known.
	starting sync.Mutex
}

func (t *monitorTask) initPid() int { return int(t.pid.Load()) }

func (t *monitorTask) Start(ctx context.Context, stdio monitor.Stdio) (monitor.Process, error) {
	b, id := t.b, t.st.ID
	// A container that runs already lost its monitor: adopt it.
	if b.rt.mayHave(id) {
		if rs, err := b.rt.state(ctx, id); err == nil && (rs.Status == "running" || rs.Status == "paused") && !t.st.Spec.TTY {
			return t.adopt(rs.Pid, stdio)
		}
	}
	// What a previous run left (an exit, a crash) goes first.
	if err := b.rt.delete(ctx, id); err != nil {
		return nil, err
	}
	if err := b.ready(ctx, t.st); err != nil {
		return nil, err
	}
	pidFile := filepath.Join(b.cfg.bundleDir(id), "init.pid")
	_ = os.Remove(pidFile)
	args := []string{"create", "--bundle", b.cfg.bundleDir(id), "--pid-file", pidFile}
	p := &process{rt: b.rt, id: id, done: make(chan struct{})}
	var child []*os.File // the ends runc passes to the container
	defer func() {
		for _, f := range child {
			f.Close()
		}
	}()
	console, err := t.openStdio(p, stdio, &child)
	if err != nil {
		return nil, err
	}
	if console != nil {
		defer console.Close()
		args = append(args, "--console-socket", console.path)
	}
	t.starting.Lock()
	defer t.starting.Unlock()
	master, err := t.create(ctx, p, append(args, id), child, console)
	if err != nil {
		return nil, err
	}
	for _, f := range child {
		f.Close()
	}
	child = nil
	if master != nil {
		p.master = master
		p.copies.Go(func() { copyOut(stdio.Stdout, master) })
		if stdio.Stdin != nil {
			go func() { _, _ = io.Copy(master, stdio.Stdin) }()
		}
	}
	if err := t.startInit(ctx, p, pidFile); err != nil {
		return nil, err
	}
	return p, nil
}

// create runs `runc create` with the container's stdio (child) and, with
// a TTY, receives the terminal over console; on failure what it made goes
// and the error carries the runtime's logged message.
func (t *monitorTask) create(ctx context.Context, p *process, args []string, child []*os.File, console *consoleSocket) (*os.File, error) {
	b, id := t.b, t.st.ID
	logFile := filepath.Join(b.cfg.bundleDir(id), "runtime.log")
	_ = os.Remove(logFile)
	c := b.rt.cmd(context.WithoutCancel(ctx), append([]string{"--log", logFile, "--log-format", "json"}, args...)...)
	c.Stdin, c.Stdout, c.Stderr = child[0], child[1], child[2]
	if err := c.Start(); err != nil {
		p.abort(child)
		return nil, fmt.Errorf("%s create: %w", b.rt.name, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = c.Wait(); close(exited) }()
	var master *os.File
	if console != nil {
		var err error
		master, err = console.receive(ctx, exited)
		if err != nil {
			<-exited
			p.abort(child)
			_ = b.rt.delete(context.WithoutCancel(ctx), id)
			if waitErr != nil {
				return nil, fmt.Errorf("%s create: %v: %s", b.rt.name, waitErr, cmp.Or(runtimeLogError(logFile), "no message"))
			}
			return nil, err
		}
	}
	<-exited
	if err := waitErr; err != nil {
		p.abort(child)
		if master != nil {
			master.Close()
		}
		_ = b.rt.delete(context.WithoutCancel(ctx), id)
		return nil, fmt.Errorf("%s create: %v: %s", b.rt.name, err, cmp.Or(runtimeLogError(logFile), "no message"))
	}
	return master, nil
}

// openStdio makes what the container's stdio is, the ends runc passes it
// going on child: with a TTY /dev/null and the console socket runc sends
// the terminal over; else the monitor's stdin and the output FIFOs, whose
// reading ends p copies to the monitor.
func (t *monitorTask) openStdio(p *process, stdio monitor.Stdio, child *[]*os.File) (*consoleSocket, error) {
	if t.st.Spec.TTY {
		console, err := newConsoleSocket()
		if err != nil {
			return nil, err
		}
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			console.Close()
			return nil, err
		}
		*child = append(*child, null, null, null)
		return console, nil
	}
	in, err := stdinFile(stdio.Stdin)
	if err != nil {
		return nil, err
	}
	*child = append(*child, in)
	bundle := t.b.cfg.bundleDir(t.st.ID)
	outR, outW, err := outputFIFO(bundle, "stdout")
	if err != nil {
		return nil, err
	}
	errR, errW, err := outputFIFO(bundle, "stderr")
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	*child = append(*child, outW, errW)
	p.copies.Go(func() { copyOut(stdio.Stdout, outR) })
	p.copies.Go(func() { copyOut(stdio.Stderr, errR) })
	return nil, nil
}

// startInit finds the created container's init (our child once runc
// exited: we are a subreaper), reaps it when it exits and has the runtime
// start it; on failure the runtime's container goes.
func (t *monitorTask) startInit(ctx context.Context, p *process, pidFile string) error {
	rt, id := t.b.rt, t.st.ID
	pid, err := readPid(pidFile)
	if err == nil {
		p.pid = pid
		p.proc, err = os.FindProcess(pid)
	}
	if err != nil {
		_ = rt.delete(context.WithoutCancel(ctx), id)
		p.abort(nil)
		return fmt.Errorf("%s create: the container's init: %w", rt.name, err)
	}
	t.pid.Store(int64(pid))
	go p.reap()
	if _, err := rt.run(context.WithoutCancel(ctx), "start", id); err != nil {
		_ = rt.delete(context.WithoutCancel(ctx), id)
		<-p.done
		return err
	}
	return nil
}

// stdinFile is what the container reads as stdin: the monitor's pipe, or
// /dev/null.
func stdinFile(r io.Reader) (*os.File, error) {
	if f, ok := r.(*os.File); ok {
		// Dup: runc's copy and ours close independently of the monitor's.
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), "stdin"), nil
	}
	if r != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		go func() { _, _ = io.Copy(pw, r); pw.Close() }()
		return pr, nil
	}
	return os.OpenFile(os.DevNull, os.O_RDONLY, 0)
}

// copyOut copies a stream to the monitor's writer until the container's
// end closes.
func copyOut(w io.Writer, r *os.File) {
	defer r.Close()
	_, _ = io.Copy(w, r)
}

func readPid(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// runtimeLogError is the last error runc logged (JSON lines), or "".
func runtimeLogError(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"level":"error"`) || strings.Contains(lines[i], `"level":"fatal"`) {
			if j := strings.Index(lines[i], `"msg":"`); j >= 0 {
				msg := lines[i][j+7:]
				if k := strings.Index(msg, `","`); k >= 0 {
					msg = msg[:k]
				}
				return strings.ReplaceAll(strings.TrimSuffix(msg, `"}`), `\"`, `"`)
			}
			return lines[i]
		}
	}
	return ""
}

func (t *monitorTask) Exec(ctx context.Context, cmd []string, out io.Writer) (int, error) {
	return t.b.execIn(ctx, t.st, daemonless.ExecRequest{Cmd: cmd, Stdout: out, Stderr: out})
}

// process is a started container init.
type process struct {
	rt     *ociRuntime
	id     string
	pid    int
	proc   *os.Process
	master *os.File // the terminal, with TTY
	copies sync.WaitGroup

	done  chan struct{} // closed once reaped
	state *os.ProcessState
	err   error

	adopted    bool         // not our child: no exit status
	lastSignal atomic.Int32 // the last signal sent, for an adopted exit
}

// abort closes what a failed start opened.
func (p *process) abort(child []*os.File) {
	for _, f := range child {
		f.Close()
	}
	p.copies.Wait()
}

// reap waits for the init (our child: we are a subreaper).
func (p *process) reap() {
	p.state, p.err = p.proc.Wait()
	close(p.done)
}

func (p *process) Pid() int { return p.pid }

func (p *process) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.proc.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	p.lastSignal.Store(int32(sig))
	return nil
}

func (p *process) Resize(width, height uint32) error {
	if p.master == nil {
		return fmt.Errorf("resize: the container has no terminal")
	}
	return unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(height), Col: uint16(width)})
}

// outputDrain bounds the wait for the output after the init exited (a
// process outside its PID namespace may still hold the pipes).
const outputDrain = 2 * time.Second

func (p *process) Wait(ctx context.Context) (monitor.Exit, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return monitor.Exit{}, ctx.Err()
	}
	drained := make(chan struct{})
	go func() { p.copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(outputDrain):
	}
	if p.master != nil {
		p.master.Close()
	}
	if p.adopted {
		exit := p.adoptedExit()
		_ = p.rt.delete(context.WithoutCancel(ctx), p.id)
		return exit, nil
	}
	oom := oomKilled(p.id)
	_ = p.rt.delete(context.WithoutCancel(ctx), p.id)
	if p.err != nil {
		return monitor.Exit{}, fmt.Errorf("wait for the container's init: %w", p.err)
	}
	ws, _ := p.state.Sys().(syscall.WaitStatus)
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return monitor.Exit{Code: code, OOMKilled: oom}, nil
}
