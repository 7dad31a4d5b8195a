// Package svc runs a cornus server in the background and finds it again:
// a detached child process, a pid file and a log file in a state
// directory, liveness by signal 0, and a graceful stop.
package svc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvStateDir overrides where background servers keep their state, so
// several cornus instances (tests beside a user's own) never collide.
const EnvStateDir = "CORNUS_STATE_DIR"

// StateDir is where pid and log files live: CORNUS_STATE_DIR, else
// /run/cornus for root, else a per-user directory under the runtime or temp
// directory. environ is KEY=VALUE pairs (normally os.Environ()).
func StateDir(environ []string) string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	switch {
	case env[EnvStateDir] != "":
		return env[EnvStateDir]
	case os.Geteuid() == 0:
		return "/run/cornus"
	case env["XDG_RUNTIME_DIR"] != "":
		return filepath.Join(env["XDG_RUNTIME_DIR"], "cornus")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("cornus-%d", os.Geteuid()))
}

// Service names one background server.
type Service struct {
	Name string // e.g. "docker"
	Dir  string // state directory
}

// PidFile is the path of the file holding the service's pid.
func (s Service) PidFile() string { return filepath.Join(s.Dir, s.Name+".pid") }

// LogFile is the path of the service's log.
func (s Service) LogFile() string { return filepath.Join(s.Dir, s.Name+".log") }

// Start runs argv (the server in the foreground) detached from the caller,
// in its own session, with output to the log file, and records its pid.
// ready is polled until it returns nil or the child dies or 15s pass.
func (s Service) Start(argv []string, env []string, ready func() error) (int, error) {
	if pid, ok := s.Running(); ok {
		return pid, fmt.Errorf("%s server is already running (pid %d); stop it with `cornus daemon stop`", s.Name, pid)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(s.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s server: %w", s.Name, err)
	}
	pid := cmd.Process.Pid
	if err := os.WriteFile(s.PidFile(), []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		_ = cmd.Process.Kill()
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if ready() == nil {
			return pid, nil
		}
		select {
		case err := <-exited:
			_ = os.Remove(s.PidFile())
			return 0, fmt.Errorf("%s server exited during start (%v); log: %s\n%s", s.Name, err, s.LogFile(), tail(s.LogFile(), 10))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return pid, fmt.Errorf("%s server (pid %d) did not become ready within 15s; log: %s", s.Name, pid, s.LogFile())
		}
	}
}

// Running returns the recorded pid if that process is alive.
func (s Service) Running() (int, bool) {
	b, err := os.ReadFile(s.PidFile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return pid, false
	}
	return pid, true
}

// Stop sends SIGTERM and waits up to timeout for the process to exit,
// then SIGKILL.
func (s Service) Stop(timeout time.Duration) error {
	pid, ok := s.Running()
	if !ok {
		_ = os.Remove(s.PidFile())
		return fmt.Errorf("no %s server is running", s.Name)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, alive := s.Running(); !alive {
			_ = os.Remove(s.PidFile())
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = os.Remove(s.PidFile())
	return nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
