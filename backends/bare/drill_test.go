package bare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/internal/testnet"
	"github.com/cornus-dev/cornus/spec"
)

const drillImage = "cornus-test/busybox:bare-drill"

// drillBackend is a backend with the test image loaded, on a data dir the
// test owns; environ is what a second backend on the same dirs reads.
func drillBackend(t testing.TB, extra ...string) (*Backend, []string) {
	t.Helper()
	b := newTestBackend(t, extra...)
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: drillImage}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadImage(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return b, b.cfg.Environ
}

// drillContainer creates and starts an httpd publishing 127.0.0.1:port
// beside a loop printing a tick every 100 ms;
// cleanup removes it even when the test fails.
func drillContainer(t *testing.T, b *Backend, name string, port int, restart string) backends.Container {
	t.Helper()
	ctx := context.Background()
	c, err := b.Create(ctx, backends.ContainerSpec{Name: name, Image: drillImage, Labels: map[string]string{"drill": name},
		Command: []string{"sh", "-c", "trap 'exit 0' TERM; httpd -p 8080; while true; do echo tick; sleep 0.1; done"}, Restart: spec.RestartPolicy{Name: restart},
		Ports: []backends.PortMapping{{HostIP: "127.0.0.1", HostPort: port, ContainerPort: 8080, Protocol: "tcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true, Volumes: true}) })
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	return c
}

func answers(t *testing.T, port int) error {
	t.Helper()
	var err error
	for range 50 {
		if _, err = testnet.HTTPGet(fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// portDiag says who holds a published port: the NAT rules naming it and
// the host's listeners on it (a refused connection has several causes:
// another test's mapping of the same port among them).
func portDiag(port int) string {
	p := strconv.Itoa(port)
	var out strings.Builder
	nat, err := exec.Command("iptables", "-w", "-t", "nat", "-S").CombinedOutput()
	fmt.Fprintf(&out, "NAT rules naming port %s (iptables: %v):\n", p, err)
	for _, l := range strings.Split(string(nat), "\n") {
		if strings.Contains(l, p) {
			out.WriteString("  " + l + "\n")
		}
	}
	ss, err := exec.Command("ss", "-Htlnp", "sport = :"+p).CombinedOutput()
	fmt.Fprintf(&out, "listeners (ss: %v): %s", err, ss)
	return out.String()
}

func killMonitor(t *testing.T, b *Backend, id string) monitor.Record {
	t.Helper()
	r, err := b.Records.Read(id)
	if err != nil || r.Monitor.Pid == 0 {
		t.Fatalf("no monitor in the record: %+v %v", r.Monitor, err)
	}
	if err := syscall.Kill(r.Monitor.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; monitor.Alive(r); i++ {
		if i > 100 {
			t.Fatalf("monitor %d still alive", r.Monitor.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

// assertGone checks a removed container left nothing on the host: no
// runtime state, no mount, no netns pin, no cgroup, no process.
func assertGone(t *testing.T, b *Backend, id string, pids ...int) {
	t.Helper()
	if _, err := b.rt.state(context.Background(), id); !isNotFound(err) {
		t.Errorf("the runtime still has the container: %v", err)
	}
	if mounted(b.cfg.rootfsDir(id)) {
		t.Errorf("its root is still mounted")
	}
	for _, p := range []string{b.cfg.ContainerDir(id), b.Net.NetnsPath(id), cgroupFile(id, "memory", ""), cgroupFile(id, "pids", "")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left behind (%v)", p, err)
		}
	}
	for _, pid := range pids {
		if processLives(pid) {
			t.Errorf("process %d is left running", pid)
		}
	}
}

// processLives reports whether pid runs, for a moment's grace (a killed
// process whose parent is gone is a zombie until its new parent reaps it:
// that is not running).
func processLives(pid int) bool {
	for range 50 {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") || strings.Contains(string(st), ") X ") {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// A monitor killed with SIGKILL: the container keeps running (its output
// FIFOs do not break under it), the next cornus command (a new backend)
// adopts it under a new monitor — supervised, its log growing again —
// stop ends it and remove leaves nothing (issue 14 fault drill).
func TestDrillKilledMonitor(t *testing.T) {
	b, environ := drillBackend(t)
	ctx := context.Background()
	port := testnet.FreePort(t)
	c := drillContainer(t, b, "drill-killed-monitor", port, "")
	// It serves before: a failure after the kill is then the adoption's.
	if err := answers(t, port); err != nil {
		t.Fatalf("the container does not serve: %v\n%s", err, portDiag(port))
	}
	r := killMonitor(t, b, c.ID)
	next, err := New(ctx, WithEnviron(environ))
	if err != nil {
		t.Fatal(err)
	}
	got, err := next.Inspect(ctx, c.ID)
	if err != nil || got.State != backends.StateRunning || got.Pid != r.State.Pid {
		t.Fatalf("after the monitor died: %s pid %d (was %d) %v %s", got.State, got.Pid, r.State.Pid, err, got.Error)
	}
	adopted, err := next.Records.Read(c.ID)
	if !monitor.Alive(adopted) || adopted.Monitor.Pid == r.Monitor.Pid {
		// New discards reconcile's errors: run it again to see one.
		lock := supervisionLock(t, next, c.ID)
		rs, rserr := next.rt.state(ctx, c.ID)
		t.Fatalf("no new monitor adopted it: monitor %+v alive %v (the killed one was pid %d; record read: %v), desired %s, state %+v; %s; runtime state %+v (%v); reconcile again: %v",
			adopted.Monitor, monitor.Alive(adopted), r.Monitor.Pid, err, adopted.Desired, adopted.State, lock, rs, rserr, next.reconcile(ctx))
	}
	if err := answers(t, port); err != nil {
		t.Fatalf("the adopted container stopped serving: %v\n%s", err, portDiag(port))
	}
	count := func() int {
		var out bytes.Buffer
		_ = next.Logs(ctx, c.ID, backends.LogOptions{Tail: -1, Stdout: &out, Stderr: &out})
		return strings.Count(out.String(), "tick")
	}
	before := count()
	time.Sleep(time.Second)
	if after := count(); after <= before {
		t.Fatalf("the adopted container's log does not grow: %d then %d ticks", before, after)
	}
	zero := time.Duration(0)
	if err := next.Stop(ctx, c.ID, backends.StopOptions{Timeout: &zero}); err != nil {
		t.Fatal(err)
	}
	if got, _ := next.Inspect(ctx, c.ID); got.State != backends.StateExited {
		t.Fatalf("after stop: %s", got.State)
	}
	if err := next.Remove(ctx, c.ID, backends.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	assertGone(t, b, c.ID, r.State.Pid, r.Monitor.Pid)
}

// supervisionLock says whether a container's supervision lock is held.
func supervisionLock(t *testing.T, b *Backend, id string) string {
	t.Helper()
	dir, err := b.Records.Dir(id)
	if err != nil {
		return fmt.Sprintf("supervision lock: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "monitor.lock"))
	if err != nil {
		return fmt.Sprintf("supervision lock: %v", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return "the supervision lock is held"
	}
	return "the supervision lock is free"
}

// A monitor killed while its lock outlives it for a moment (a killed
// process lets go of its files once all its threads are gone, after its
// main thread shows as a zombie): a start then must not take the lock's
// holder for another start and report the container supervised; it waits
// for the lock and adopts the container once it is free.
func TestDrillStartBesideDeadMonitorsLock(t *testing.T) {
	b, environ := drillBackend(t)
	ctx := context.Background()
	port := testnet.FreePort(t)
	c := drillContainer(t, b, "drill-dead-monitor-lock", port, "")
	next, err := New(ctx, WithEnviron(environ)) // before the kill: its reconcile finds nothing to do
	if err != nil {
		t.Fatal(err)
	}
	dir, err := b.Records.Dir(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Open the lock before the kill, take it once the monitor is gone.
	lock, err := os.Open(filepath.Join(dir, "monitor.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	r := killMonitor(t, b, c.ID)
	// The killed monitor's lock may outlive its zombie for a moment (what
	// this test is about): take it once it is free.
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			t.Fatalf("take the dead monitor's lock: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := next.Start(short, c.ID); err == nil {
		got, _ := next.Records.Read(c.ID)
		t.Fatalf("start while the dead monitor's lock is held reported success; monitor %+v alive %v (the killed one was pid %d)", got.Monitor, monitor.Alive(got), r.Monitor.Pid)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := next.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	adopted, _ := next.Records.Read(c.ID)
	if !monitor.Alive(adopted) || adopted.Monitor.Pid == r.Monitor.Pid {
		t.Fatalf("no new monitor adopted it: %+v; %s", adopted.Monitor, supervisionLock(t, next, c.ID))
	}
	if err := answers(t, port); err != nil {
		t.Fatalf("the adopted container stopped serving: %v\n%s", err, portDiag(port))
	}
}

// A start cut short (CI20: up killed while a monitor was starting the
// process) leaves a record that says created under a live monitor. A
// forced remove must stop the container through that monitor and leave
// nothing, not delete the runtime's container under it and then refuse
// ("its monitor still runs"). The runtime here is runc behind a wrapper
// that takes 3 s to create, so the remove lands inside the start.
func TestDrillRemoveWhileMonitorStarts(t *testing.T) {
	runc, err := exec.LookPath(DefaultRuntime)
	if err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(t.TempDir(), "slow-runc")
	script := "#!/bin/sh\ncase \" $* \" in *\" create \"*) sleep 3;; esac\nexec " + runc + " \"$@\"\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := drillBackend(t, EnvRuntime+"="+slow)
	ctx := context.Background()
	c, err := b.Create(ctx, backends.ContainerSpec{Name: "drill-remove-starting", Image: drillImage,
		Command: []string{"sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $!; do :; done"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true}) })
	started := make(chan error, 1)
	go func() { started <- b.Start(ctx, c.ID) }()
	var r monitor.Record
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r, err = b.Records.Read(c.ID)
		if err == nil && r.Monitor.Pid != 0 && r.State.Status == monitor.StatusCreated && monitor.Alive(r) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no monitor took the container while it was created: %+v %v", r, err)
		}
	}
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true}); err != nil {
		t.Fatalf("forced remove while its monitor starts it: %v", err)
	}
	t.Logf("the start it cut short: %v", <-started)
	if _, err := b.Records.Read(c.ID); !errdefs.IsNotFound(err) {
		t.Errorf("the record outlived the remove: %v", err)
	}
	assertGone(t, b, c.ID, r.Monitor.Pid)
}

// A simulated host reboot — monitor and container killed, the overlay
// root unmounted, the network namespace pin reduced to a plain file — and
// the next cornus command rebuilds the container from its records: a
// restart=always container runs again, reachable on its published port;
// one without a restart policy is recorded as exited (issue 14 fault drill).
func TestDrillReboot(t *testing.T) {
	b, environ := drillBackend(t)
	ctx := context.Background()
	port, port2 := testnet.FreePort(t), testnet.FreePort(t)
	c := drillContainer(t, b, "drill-reboot", port, spec.RestartAlways)
	once := drillContainer(t, b, "drill-reboot-no", port2, "")
	for _, id := range []string{c.ID, once.ID} {
		r := killMonitor(t, b, id)
		if err := b.rt.delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := unmount(b.cfg.rootfsDir(id)); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Unmount(b.Net.NetnsPath(id), syscall.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
		if processLives(r.State.Pid) {
			t.Fatalf("the container's init %d survived the simulated reboot", r.State.Pid)
		}
	}
	next, err := New(ctx, WithEnviron(environ))
	if err != nil {
		t.Fatal(err)
	}
	got, err := next.Inspect(ctx, c.ID)
	if err != nil || got.State != backends.StateRunning {
		t.Fatalf("after the reboot: %s %v (%s)", got.State, err, got.Error)
	}
	if err := answers(t, port); err != nil {
		t.Fatalf("the rebuilt container does not answer on its published port: %v", err)
	}
	var out bytes.Buffer
	if code, err := next.Exec(ctx, c.ID, backends.ExecOptions{Cmd: []string{"cat", "/proc/1/cmdline"}, Stdout: &out}); err != nil || code != 0 {
		t.Fatalf("exec after the reboot: %d %v", code, err)
	}
	if got, _ := next.Inspect(ctx, once.ID); got.State != backends.StateExited {
		t.Fatalf("a container with no restart policy after the reboot: %s, want exited", got.State)
	}
	for _, id := range []string{c.ID, once.ID} {
		if err := next.Remove(ctx, id, backends.RemoveOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		assertGone(t, b, id)
	}
	if _, err := next.Inspect(ctx, c.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("inspect after remove: %v", err)
	}
}

// Healthcheck probes run through `runc exec`, whose intermediate
// processes the monitor (a subreaper) inherits: they are reaped, so none
// pins the container's PID namespace and a stop finishes (found by the
// compose e2e run: the init hung in zap_pid_ns_processes).
func TestProbesLeaveNoZombies(t *testing.T) {
	b, _ := drillBackend(t)
	ctx := context.Background()
	c, err := b.Create(ctx, backends.ContainerSpec{Name: "drill-probes", Image: drillImage, Init: ocispec.FindInit() != "",
		Command:     []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.1; done"},
		Healthcheck: &backends.Healthcheck{Test: []string{"CMD", "true"}, Interval: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true}) })
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	// Healthy, and enough probes run (each leaves runc's intermediate
	// processes behind) for zombies to pile up without the reaper.
	const probes = 20
	seen := map[time.Time]bool{}
	var r monitor.Record
	for deadline := time.Now().Add(time.Minute); ; {
		r, _ = b.Records.Read(c.ID)
		h := r.State.Health
		if h != nil {
			for _, p := range h.Log {
				seen[p.Start] = true
			}
		}
		if h != nil && h.Status == "healthy" && len(seen) >= probes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: health %+v, %d probes seen (want healthy and %d)", h, len(seen), probes)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Stats come from the container's cgroups.
	if st, err := b.Stats(ctx, c.ID); err != nil || st.Pids == 0 || st.MemoryUsage == 0 || st.CPUTotal == 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
	// The runtime's own accounting (runsc's source) says the same.
	if st, err := b.runtimeStats(ctx, c.ID); err != nil || st.Pids == 0 || st.MemoryUsage == 0 || st.CPUTotal == 0 {
		t.Fatalf("runtime stats %+v %v", st, err)
	}
	time.Sleep(reapInterval + time.Second)
	// One may be on its way (reaped at its SIGCHLD); dozens accumulate
	// without the reaper.
	if z := zombieChildren(r.Monitor.Pid); len(z) > 3 {
		t.Fatalf("the monitor has %d zombie children: %v", len(z), z)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	grace := 5 * time.Second
	if err := b.Stop(sctx, c.ID, backends.StopOptions{Timeout: &grace}); err != nil {
		t.Fatal(err)
	}
}
