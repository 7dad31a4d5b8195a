package bare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"github.com/creack/pty"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/records"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// Exec runs a process in the running container (execIn).
func (d driver) Exec(ctx context.Context, st records.Container, r daemonless.ExecRequest) (int, error) {
	return d.b.execIn(ctx, st, r)
}

// execIn runs a process in the running container through `runc exec`
// (in the foreground: runc waits for it and exits with its status) and
// returns its exit code. A TTY exec gets a terminal of ours as runc's own
// stdio, which runc relays to the container's and resizes on SIGWINCH.
func (b *Backend) execIn(ctx context.Context, st records.Container, r daemonless.ExecRequest) (int, error) {
	rs, err := b.rt.state(ctx, st.ID)
	switch {
	case err == nil && rs.Status == "paused":
		return -1, fmt.Errorf("container %s is paused: unpause it first: %w", st.Name, errdefs.ErrConflict)
	case err != nil || rs.Status != "running":
		return -1, daemonless.NotRunning(st.Name)
	}
	p, err := b.execProcess(st, rs.Pid, r)
	if err != nil {
		return -1, err
	}
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	execID := "exec-" + hex.EncodeToString(buf)
	procFile := filepath.Join(b.cfg.bundleDir(st.ID), execID+".json")
	logFile := filepath.Join(b.cfg.bundleDir(st.ID), execID+".log")
	data, _ := json.Marshal(p)
	if err := os.WriteFile(procFile, data, 0o600); err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	defer os.Remove(procFile)
	defer os.Remove(logFile)
	pidFile := filepath.Join(b.cfg.bundleDir(st.ID), execID+".pid")
	defer os.Remove(pidFile)
	args := []string{"--log", logFile, "--log-format", "json", "exec", "--process", procFile, "--pid-file", pidFile}
	if r.TTY {
		args = append(args, "--tty")
	}
	c := b.rt.cmd(context.WithoutCancel(ctx), append(args, st.ID)...)
	var code int
	if r.TTY {
		code, err = b.execTTY(ctx, c, r, execID, pidFile)
	} else {
		code, err = b.execPipes(ctx, c, r, execID, pidFile)
	}
	if err != nil {
		return code, err
	}
	if code != 0 {
		if msg := runtimeLogError(logFile); msg != "" {
			return -1, fmt.Errorf("exec %v in %s: %s: %w", r.Cmd, st.Name, msg, execClass(msg))
		}
	}
	return code, nil
}

// execClass classes a runtime's exec failure.
func execClass(msg string) error {
	if containsAny(msg, "no such file or directory", "executable file not found", "not found in $PATH") {
		return errdefs.ErrNotFound
	}
	return errdefs.ErrUnknown
}

// execProcess is the exec's OCI process: the container's, with the
// request's arguments, environment, directory, user and terminal.
func (b *Backend) execProcess(st records.Container, pid int, r daemonless.ExecRequest) (specs.Process, error) {
	var sp specs.Spec
	if err := localstore.ReadJSON(filepath.Join(b.cfg.bundleDir(st.ID), "config.json"), &sp); err != nil || sp.Process == nil {
		return specs.Process{}, fmt.Errorf("exec in %s: the container's config: %v: %w", st.Name, err, errdefs.ErrNotFound)
	}
	p := *sp.Process
	p.Args, p.Terminal, p.ConsoleSize = r.Cmd, r.TTY, nil
	p.Env = append(append([]string{}, p.Env...), r.Env...)
	if r.Cwd != "" {
		p.Cwd = r.Cwd
	}
	if r.User != "" {
		root, err := rootfs.Open(fmt.Sprintf("/proc/%d/root", pid))
		if err != nil {
			return p, fmt.Errorf("exec: %w", err)
		}
		u, err := root.LookupUser(r.User)
		root.Close()
		if err != nil {
			return p, fmt.Errorf("exec: user %s: %w", r.User, err)
		}
		p.User.UID, p.User.GID, p.User.AdditionalGids = u.UID, u.GID, nil
	}
	if r.Privileged {
		if err := ocispec.PrivilegedExec(&p); err != nil {
			return p, err
		}
	}
	return p, nil
}

func (b *Backend) execPipes(ctx context.Context, c *exec.Cmd, r daemonless.ExecRequest, execID, pidFile string) (int, error) {
	stdout, stderr := daemonless.Serialized(r.Stdout, r.Stderr)
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = stdout
	}
	c.Stdout, c.Stderr = stdout, stderr
	var pw *os.File
	if r.Stdin != nil {
		pr, w, err := os.Pipe()
		if err != nil {
			return -1, err
		}
		pw = w
		c.Stdin = pr
		defer pr.Close()
		go func() {
			_, _ = io.Copy(pw, r.Stdin)
			pw.Close()
		}()
	}
	if err := c.Start(); err != nil {
		if pw != nil {
			pw.Close()
		}
		return -1, fmt.Errorf("exec: %w", err)
	}
	if r.Started != nil {
		r.Started(execID)
	}
	return waitExec(ctx, c, pidFile, func() {
		if pw != nil {
			pw.Close() // a stdin that never ends must not hold the exec
		}
	})
}

func (b *Backend) execTTY(ctx context.Context, c *exec.Cmd, r daemonless.ExecRequest, execID, pidFile string) (int, error) {
	size := &pty.Winsize{Rows: 24, Cols: 80}
	var sizes <-chan [2]uint32
	if r.Resize != nil {
		// The first size, if already sent, is the terminal's start size.
		select {
		case s, ok := <-r.Resize:
			if ok {
				size = &pty.Winsize{Rows: uint16(s[0]), Cols: uint16(s[1])}
			}
		default:
		}
		sizes = r.Resize
	}
	master, err := pty.StartWithSize(c, size)
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	defer master.Close()
	if r.Started != nil {
		r.Started(execID)
	}
	var out sync.WaitGroup
	if r.Stdout != nil {
		out.Go(func() { _, _ = io.Copy(r.Stdout, master) })
	}
	if r.Stdin != nil {
		go func() { _, _ = io.Copy(master, r.Stdin) }()
	}
	if sizes != nil {
		go func() {
			for s := range sizes {
				_ = pty.Setsize(master, &pty.Winsize{Rows: uint16(s[0]), Cols: uint16(s[1])})
			}
		}()
	}
	code, err := waitExec(ctx, c, pidFile, func() {})
	out.Wait() // EIO once runc, the last holder of the terminal, exited
	return code, err
}

// waitExec waits for runc exec; when ctx ends first the process in the
// container is killed (runc then exits with its status).
func waitExec(ctx context.Context, c *exec.Cmd, pidFile string, exited func()) (int, error) {
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		if pid, perr := readPid(pidFile); perr == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// ctx ended: runc's exit after the kill is not reported.
		select {
		case <-done: //nolint:errcheck // see above
		case <-time.After(5 * time.Second):
			_ = c.Process.Signal(syscall.SIGKILL)
			<-done //nolint:errcheck // see above
		}
		exited()
		return -1, ctx.Err()
	}
	exited()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return -1, fmt.Errorf("exec: %w", err)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
