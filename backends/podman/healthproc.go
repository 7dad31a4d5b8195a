package podman

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/internal/envlist"
)

// A healthcheck driver is a detached `cornus podman-health ID` process,
// one per running container with a healthcheck on a service that cannot
// schedule healthchecks itself. It is found by its lock file,
// <data dir>/podman/health/<ID>.lock: the driver holds an exclusive flock
// on it for its whole life and writes its pid there, so a second driver is
// never started and a crashed one leaves no lock behind.

// Environment a spawner passes to its driver.
const (
	envDriverGiveUp = "CORNUS_PODMAN_HEALTH_GIVE_UP"  // how long the service may be unreachable
	envDriverReady  = "CORNUS_PODMAN_HEALTH_READY_FD" // the readiness pipe's descriptor
)

// How long a driver waits for a service that stopped answering: a named
// service's containers outlive a restart of it, so long; a private
// service (CORNUS_PODMAN_SERVICE=1) ends with the cornus process that ran
// it, and so do its drivers, shortly after.
const (
	defaultDriverGiveUp = 10 * time.Minute
	privateDriverGiveUp = 30 * time.Second
)

// Bounds of spawning and stopping a driver.
const (
	driverReadyTimeout = 5 * time.Second
	driverStopGrace    = 3 * time.Second
	driverLogMax       = 1 << 20 // health.log is truncated past this at a spawn
)

func driverDir(cfg config) string { return filepath.Join(cfg.dataDir, "health") }

func driverLockPath(dir, id string) string { return filepath.Join(dir, id+".lock") }

// driverLock is a driver's hold on its container's lock file.
type driverLock struct {
	f    *os.File
	path string
}

// acquireDriverLock takes container id's lock for this process and writes
// the pid into it; ok is false when another driver holds it. A lock file
// that its holder removed meanwhile is not taken: the fresh one is.
func acquireDriverLock(dir, id string) (l *driverLock, ok bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("healthcheck driver lock: %w", err)
	}
	path := driverLockPath(dir, id)
	// Whoever checks for a driver holds a shared lock for a moment.
	deadline := time.Now().Add(time.Second)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("healthcheck driver lock: %w", err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil && sameFile(f, path):
			if err := f.Truncate(0); err == nil {
				_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return &driverLock{f: f, path: path}, true, nil
		case err == nil: // removed by the driver that just ended
			f.Close()
			continue
		}
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, fmt.Errorf("healthcheck driver lock: %w", err)
		}
		if time.Now().After(deadline) {
			return nil, false, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// release removes the lock file (still holding the lock, so no other
// driver took it) and lets go.
func (l *driverLock) release() {
	if sameFile(l.f, l.path) {
		_ = os.Remove(l.path)
	}
	l.f.Close()
}

func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// driverAlive reports whether a driver holds container id's lock.
func driverAlive(dir, id string) bool {
	f, err := os.Open(driverLockPath(dir, id))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	return false // closing drops the shared lock
}

// stopDriver ends container id's driver, if one runs: SIGTERM, then
// SIGKILL after a grace; it returns once the lock is free, the process
// gone and the lock file removed.
func stopDriver(dir, id string) error {
	path := driverLockPath(dir, id)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("healthcheck driver of container %s: %w", id, err)
	}
	defer f.Close()
	locked := func() bool { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil }
	if !locked() {
		pid := readPid(f)
		signal := func(sig syscall.Signal) {
			if pid > 0 && isDriverProcess(pid, id) {
				_ = syscall.Kill(pid, sig)
			}
		}
		signal(syscall.SIGTERM)
		if !waitUntil(driverStopGrace, locked) {
			signal(syscall.SIGKILL)
			if !waitUntil(driverStopGrace, locked) {
				return fmt.Errorf("healthcheck driver of container %s (pid %d) does not exit", id, pid)
			}
		}
		// The lock goes a moment before the process: wait for that too.
		waitUntil(time.Second, func() bool { return pid <= 0 || !isDriverProcess(pid, id) })
	}
	if sameFile(f, path) {
		_ = os.Remove(path)
	}
	return nil
}

func readPid(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// isDriverProcess checks that pid is container id's driver (and no
// process that reused the pid); a zombie has no command line.
func isDriverProcess(pid int, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return len(args) >= 2 && args[len(args)-1] == id && args[len(args)-2] == DriverCommand[len(DriverCommand)-1]
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// driveHealth makes sure a running container with a healthcheck has a
// driver, where podman cannot schedule healthchecks itself.
func (b *Backend) driveHealth(ctx context.Context, id string) error {
	if info, err := b.hostInfo(ctx); err == nil && info.schedulesHealthchecks() {
		return nil
	}
	d, err := b.inspect(ctx, id)
	if err != nil {
		return err
	}
	if _, ok := timingsOf(d); !ok || !running(d) {
		return nil
	}
	dir := driverDir(b.cfg)
	if driverAlive(dir, d.ID) {
		return nil
	}
	return b.spawnDriver(dir, d.ID)
}

// driverRef names a container's driver for ending it once the
// container stopped or went (when its ID can no longer be looked up).
type driverRef struct{ dir, id string }

// driverOf finds the driver of container id (a name or a short ID is
// resolved only when some driver runs at all); the zero ref has none.
func (b *Backend) driverOf(ctx context.Context, id string) driverRef {
	dir := driverDir(b.cfg)
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(matches) == 0 {
		return driverRef{}
	}
	if !isFullID(id) {
		d, err := b.inspect(ctx, id)
		if err != nil {
			return driverRef{} // no container, so no driver known by its ID
		}
		id = d.ID
	}
	return driverRef{dir: dir, id: id}
}

// end stops the driver, if one runs.
func (r driverRef) end() error {
	if r.id == "" {
		return nil
	}
	return stopDriver(r.dir, r.id)
}

func isFullID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// spawnDriver starts a detached driver for container id: its own session,
// stdin on /dev/null, output to health.log, working directory /, so it
// outlives this process. It returns once the driver holds the lock (or
// found another driver holding it).
func (b *Backend) spawnDriver(dir, id string) error {
	exe, err := b.driverExecutable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("healthcheck driver: %w", err)
	}
	logPath := filepath.Join(dir, "health.log")
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > driverLogMax {
		_ = os.Truncate(logPath, 0)
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("healthcheck driver: %w", err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("healthcheck driver: %w", err)
	}
	defer pr.Close()
	cmd := &exec.Cmd{
		Path: exe, Args: append(append([]string{exe}, DriverCommand...), id), Env: b.driverEnv(),
		Dir: "/", Stdout: logf, Stderr: logf, ExtraFiles: []*os.File{pw},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return fmt.Errorf("healthcheck driver: start %s: %w", exe, err)
	}
	// Reap it if it ends while this process lives; else init adopts it.
	go func() { _ = cmd.Wait() }()
	_ = pr.SetReadDeadline(time.Now().Add(driverReadyTimeout))
	line, err := bufio.NewReader(pr).ReadString('\n')
	switch {
	case err == nil && line == "ready\n":
		return nil
	case errors.Is(err, io.EOF) && driverAlive(dir, id):
		return nil // another driver had it
	case errors.Is(err, io.EOF):
		return fmt.Errorf("healthcheck driver for container %s exited at once (see %s)", id, logPath)
	}
	return fmt.Errorf("healthcheck driver for container %s: not ready after %s: %v", id, driverReadyTimeout, err)
}

// driverExecutable is the cornus binary drivers run: this program, or
// CORNUS_MONITOR_BINARY. A test binary is refused: it would run the tests.
func (b *Backend) driverExecutable() (string, error) {
	if b.cfg.driverBinary != "" {
		return b.cfg.driverBinary, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("healthcheck driver: find the cornus executable: %w", err)
	}
	if strings.HasSuffix(exe, ".test") {
		return "", fmt.Errorf("healthcheck driver: %s is a test binary: set %s to a cornus binary", exe, EnvMonitorBinary)
	}
	return exe, nil
}

// driverEnv is the driver's environment: this backend's, naming the
// endpoint in use as the socket (a driver never starts a service).
func (b *Backend) driverEnv() []string {
	giveUp := defaultDriverGiveUp
	if b.svc != nil {
		giveUp = privateDriverGiveUp
	}
	env := make([]string, 0, len(b.cfg.environ)+3)
	for _, kv := range b.cfg.environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case EnvSocket, EnvService, envDriverGiveUp, envDriverReady:
			continue
		}
		env = append(env, kv)
	}
	return append(env, EnvSocket+"="+b.Endpoint(), envDriverGiveUp+"="+giveUp.String(), envDriverReady+"=3")
}

// readyPipe is a driver's end of its spawner's readiness pipe (nil when
// not spawned by one).
type readyPipe struct{ f *os.File }

func readyPipeFrom(environ []string) *readyPipe {
	fd, err := strconv.Atoi(envlist.Get(environ, envDriverReady))
	if err != nil || fd < 3 {
		return nil
	}
	syscall.CloseOnExec(fd)
	return &readyPipe{f: os.NewFile(uintptr(fd), "health-ready")}
}

func (p *readyPipe) signal() {
	if p != nil {
		_, _ = p.f.WriteString("ready\n")
		p.close()
	}
}

func (p *readyPipe) close() {
	if p != nil {
		p.f.Close()
	}
}
