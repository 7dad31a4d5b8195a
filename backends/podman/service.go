package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/procattr"
	"github.com/cornus-dev/cornus/internal/svc"
)

// Service supervision bounds.
const (
	serviceReadyTimeout = 20 * time.Second
	serviceStopGrace    = 5 * time.Second
	serviceMaxBackoff   = 30 * time.Second
)

// service is a `podman system service` cornus runs itself
// (CORNUS_PODMAN_SERVICE=1): on a socket private to this process, restarted
// when it exits, stopped with the backend (and, through the parent-death
// signal, when this process dies).
type service struct {
	bin     string
	environ []string
	sock    string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has exited
	stopped bool
}

// startService starts the service and waits until it answers.
func startService(ctx context.Context, cfg config) (*service, error) {
	bin, err := exec.LookPath(cfg.podman)
	if err != nil {
		return nil, fmt.Errorf("%s=1: cannot run %q: %v (install podman: apt-get install -y podman catatonit): %w",
			EnvService, cfg.podman, err, errdefs.ErrUnavailable)
	}
	dir := filepath.Join(svc.StateDir(cfg.environ), "podman")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s=1: state directory: %w", EnvService, err)
	}
	s := &service{
		bin: bin, environ: cfg.environ,
		sock:    filepath.Join(dir, fmt.Sprintf("service-%d.sock", os.Getpid())),
		logPath: filepath.Join(dir, fmt.Sprintf("service-%d.log", os.Getpid())),
	}
	if err := s.spawn(); err != nil {
		return nil, err
	}
	if err := s.awaitReady(ctx); err != nil {
		_ = s.stop()
		return nil, err
	}
	go s.supervise()
	return s, nil
}

func (s *service) endpoint() endpoint { return endpoint{network: "unix", address: s.sock} }

// spawn starts one podman process.
func (s *service) spawn() error {
	_ = os.Remove(s.sock) // a stale socket of a process that died
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s=1: service log: %w", EnvService, err)
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "system", "service", "--time=0", "unix://"+s.sock)
	cmd.Env = s.environ
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a terminal's ^C goes to cornus, which stops
	// it in order), and SIGTERM should cornus die without stopping it.
	cmd.SysProcAttr = procattr.Daemon()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s=1: start %s system service: %w", EnvService, s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return nil
}

// awaitReady polls the socket until podman answers, the process exits or
// the time is up.
func (s *service) awaitReady(ctx context.Context) error {
	cli := newClient(s.endpoint)
	defer cli.http.CloseIdleConnections()
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	deadline := time.After(serviceReadyTimeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := cli.call(pctx, request{method: "GET", path: "/_ping"}, nil)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s=1: podman system service exited before answering (see %s): %w", EnvService, s.logPath, errdefs.ErrUnavailable)
		case <-deadline:
			return fmt.Errorf("%s=1: podman system service did not answer on %s within %v (see %s): %w", EnvService, s.sock, serviceReadyTimeout, s.logPath, errdefs.ErrUnavailable)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// supervise restarts the service whenever it exits, with a growing pause
// while it keeps failing, until stop.
func (s *service) supervise() {
	backoff := time.Second
	for {
		s.mu.Lock()
		exited, stopped := s.exited, s.stopped
		s.mu.Unlock()
		if stopped {
			return
		}
		began := time.Now()
		<-exited
		s.mu.Lock()
		stopped = s.stopped
		s.mu.Unlock()
		if stopped {
			return
		}
		if time.Since(began) > time.Minute {
			backoff = time.Second // it ran a while: not a crash loop
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, serviceMaxBackoff)
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if err := s.spawn(); err != nil {
			// Try again after the next pause.
			s.mu.Lock()
			ch := make(chan struct{})
			close(ch)
			s.exited = ch
			s.mu.Unlock()
		}
	}
}

// stop ends supervision and the service: SIGTERM, then SIGKILL after a
// grace period. Containers are not affected (conmon runs them).
func (s *service) stop() error {
	s.mu.Lock()
	s.stopped = true
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	var err error
	if cmd != nil && cmd.Process != nil {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(serviceStopGrace):
				if kerr := cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
					err = fmt.Errorf("stop podman service: %w", kerr)
				}
				<-exited
			}
		}
	}
	_ = os.Remove(s.sock)
	return err
}
