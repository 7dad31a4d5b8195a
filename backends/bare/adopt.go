package bare

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// A container's stdout and stderr are FIFOs in its bundle, not pipes: the
// container holds its end open read-write, so when its monitor dies
// (kill -9) its writes do not fail with EPIPE — they block once the
// FIFO's buffer is full — and the next monitor opens the FIFOs again and
// carries on (adopt). A pipe's read end dies with the monitor and takes
// the container down with SIGPIPE at its next line.

// outputFIFO makes (once) and opens a container's output FIFO: the end
// for the container (read-write, so it never sees a reader-less FIFO) and
// the monitor's reading end.
func outputFIFO(bundle, name string) (r, w *os.File, err error) {
	path := filepath.Join(bundle, name+".fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, nil, fmt.Errorf("%s fifo: %w", name, err)
	}
	if w, err = os.OpenFile(path, os.O_RDWR, 0); err != nil {
		return nil, nil, fmt.Errorf("%s fifo: %w", name, err)
	}
	if r, err = openFIFOReader(path); err != nil {
		w.Close()
		return nil, nil, err
	}
	return r, w, nil
}

// openFIFOReader opens a FIFO's reading end without blocking (a writer
// exists: the container's end); reads end at EOF once every writer is
// gone, that is when the container's processes have all exited.
func openFIFOReader(path string) (*os.File, error) {
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	return r, nil
}

// adopt supervises a container that is running without a monitor (its
// monitor was killed): its output FIFOs are read again and its init is
// watched through a pidfd. The init is not this monitor's child, so its
// exit status cannot be read: the exit is recorded as 255 (unknown),
// or as the signal a stop sent.
func (t *monitorTask) adopt(pid int, stdio monitor.Stdio) (monitor.Process, error) {
	bundle := t.b.cfg.bundleDir(t.st.ID)
	p := &process{rt: t.b.rt, id: t.st.ID, pid: pid, done: make(chan struct{}), adopted: true}
	for name, out := range map[string]io.Writer{"stdout": stdio.Stdout, "stderr": stdio.Stderr} {
		r, err := openFIFOReader(filepath.Join(bundle, name+".fifo"))
		if err != nil {
			return nil, fmt.Errorf("adopt container %s: %w", t.st.Name, err)
		}
		p.copies.Go(func() { copyOut(out, r) })
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("adopt container %s: pidfd of %d: %w", t.st.Name, pid, err)
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	p.proc = proc
	t.pid.Store(int64(pid))
	go func() {
		defer close(p.done)
		defer unix.Close(fd)
		for {
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int((time.Second).Milliseconds()))
			if n > 0 || err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	return p, nil
}

// adoptedExit is an adopted init's exit: unknown, unless a signal this
// monitor sent explains it.
func (p *process) adoptedExit() monitor.Exit {
	code := 255
	if sig := p.lastSignal.Load(); sig != 0 {
		code = 128 + int(sig)
	}
	return monitor.Exit{Code: code, OOMKilled: oomKilled(p.id)}
}
