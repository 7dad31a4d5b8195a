package daemoncrash

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends/dockerhost"
)

// dockerd is a private Docker daemon for one test: its own data root,
// exec root (where it starts its own containerd) and socket, in a network
// namespace the test made, so nothing of the shared daemon, the host's
// network or other tests is touched. Killing it and starting it again
// keeps that namespace and those directories, as a host restart of
// dockerd would.
type dockerd struct {
	t       *testing.T
	root    string
	netns   *exec.Cmd // holds the network namespace while dockerd restarts
	cmd     *exec.Cmd
	log     *os.File
	started int
}

// needDockerd skips (outside CI) or fails (CI=true) when the drill cannot
// run here, saying how to make it run.
func needDockerd(t *testing.T) {
	t.Helper()
	var missing []string
	for _, bin := range []string{"dockerd", "containerd", "runc", "nsenter", "/bin/busybox"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	msg := ""
	switch {
	case len(missing) > 0:
		msg = fmt.Sprintf("%s not found: apt-get install -y docker.io util-linux busybox-static", strings.Join(missing, ", "))
	case os.Geteuid() != 0:
		msg = "a private dockerd needs root"
	}
	if msg == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// startDockerd starts the private daemon; everything it made is torn
// down when the test ends, pass or fail.
func startDockerd(t *testing.T) *dockerd {
	t.Helper()
	needDockerd(t)
	// Orphans of the daemon (its containerd when it is killed, the shims
	// containerd double-forks) become this process's children, so that
	// they are reaped: an unreaped containerd looks alive to the next
	// dockerd, which then waits for it forever.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	root, err := os.MkdirTemp("", "cornus-crash-") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	d := &dockerd{t: t, root: root}
	t.Cleanup(d.teardown)
	d.log, err = os.Create(filepath.Join(root, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	d.netns = exec.Command("/bin/busybox", "sleep", "86400")
	d.netns.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := d.netns.Start(); err != nil {
		t.Fatalf("network namespace holder: %v", err)
	}
	d.start()
	return d
}

const prSetChildSubreaper = 36

func (d *dockerd) host() string { return "unix://" + filepath.Join(d.root, "d.sock") }

// start runs dockerd and waits until it answers.
func (d *dockerd) start() {
	d.t.Helper()
	d.started++
	fmt.Fprintf(d.log, "--- start %d\n", d.started)
	d.cmd = exec.Command("nsenter", "--net=/proc/"+strconv.Itoa(d.netns.Process.Pid)+"/ns/net", "dockerd",
		"-H", d.host(), "--data-root", filepath.Join(d.root, "data"), "--exec-root", filepath.Join(d.root, "exec"),
		"--pidfile", filepath.Join(d.root, "d.pid"), "--bridge", "none", "--iptables=false", "--ip-masq=false")
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	// nsenter execs dockerd: if the test binary dies (a timeout), so does
	// the daemon, and its containerd with it.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("start dockerd: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		b, err := dockerhost.New(ctx, dockerhost.WithHost(d.host()))
		cancel()
		if err == nil {
			_ = b.Close()
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("private dockerd did not answer in 60 s: %v\n%s", err, d.logTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kill SIGKILLs dockerd, as a crash would, and waits until its containerd
// (killed with it: it dies with its parent) is gone.
func (d *dockerd) kill() {
	d.t.Helper()
	ctrdPID := readPID(filepath.Join(d.root, "exec", "containerd", "containerd.pid"))
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.cmd = nil
	if ctrdPID > 0 {
		if err := reap(ctrdPID, 10*time.Second); err != nil {
			d.t.Fatalf("containerd (pid %d) after dockerd was killed: %v", ctrdPID, err)
		}
	}
}

// reap waits for pid, a child of ours (we are a subreaper), to exit.
func reap(pid int, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || errors.Is(err, syscall.ECHILD) && !alive(pid) {
			return nil
		}
	}
	return fmt.Errorf("still running after %v", timeout)
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func readPID(path string) int {
	b, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func (d *dockerd) logTail() string {
	b, _ := os.ReadFile(d.log.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// teardown removes everything the daemon made, whatever state the test
// left it in: containers (through the daemon when it runs), the daemon,
// its containerd, shims and container processes, their cgroups and shim
// sockets, every mount under its directories, the namespace holder and
// the directories.
func (d *dockerd) teardown() {
	t := d.t
	if d.cmd != nil {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = d.cmd.Process.Kill()
			<-done
		}
	}
	ids := d.containerIDs()
	execRoot := filepath.Join(d.root, "exec")
	for _, pid := range d.processes(ids) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	reapZombies()
	for _, id := range ids {
		// Shims killed with SIGKILL leave their sockets (containerd 1.6
		// names them by a hash of its address, namespace and id).
		sum := sha256.Sum256([]byte(filepath.Join(execRoot, "containerd", "containerd.sock", "moby", id)))
		_ = os.Remove(fmt.Sprintf("/run/containerd/s/%x", sum))
		dirs, _ := filepath.Glob("/sys/fs/cgroup/*/docker/" + id)
		for _, dir := range dirs {
			_ = syscall.Rmdir(dir)
		}
	}
	if err := unmountUnder(d.root); err != nil {
		t.Errorf("teardown: %v (left %s in place)", err, d.root)
	} else if err := os.RemoveAll(d.root); err != nil {
		t.Errorf("teardown: %v", err)
	}
	if d.netns != nil && d.netns.Process != nil {
		_ = d.netns.Process.Kill()
		_ = d.netns.Wait()
	}
	if left := d.processes(ids); len(left) > 0 {
		t.Errorf("teardown: processes of the private dockerd left: %v", left)
	}
	_ = d.log.Close()
}

// containerIDs lists every container id the daemon and its containerd
// know of, on disk.
func (d *dockerd) containerIDs() []string {
	var ids []string
	for _, dir := range []string{
		filepath.Join(d.root, "data", "containers"),
		filepath.Join(d.root, "exec", "containerd", "daemon", "io.containerd.runtime.v2.task", "moby"),
	} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if len(e.Name()) == 64 && !slices.Contains(ids, e.Name()) {
				ids = append(ids, e.Name())
			}
		}
	}
	return ids
}

// processes finds what runs for this daemon: processes naming its
// directories (dockerd, containerd, shims) and processes in the cgroups of
// its containers. Never matched by a broad name: other daemons' shims and
// containers look the same.
func (d *dockerd) processes(ids []string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if pid == os.Getpid() || d.netns != nil && d.netns.Process != nil && pid == d.netns.Process.Pid {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if strings.Contains(string(cmdline), d.root+"/") {
			pids = append(pids, pid)
			continue
		}
		cgroup, _ := os.ReadFile(filepath.Join(p, "cgroup"))
		for _, id := range ids {
			if strings.Contains(string(cgroup), id) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// reapZombies collects the exited children this subreaper inherited.
// Every command the test ran has been waited for by then.
func reapZombies() {
	time.Sleep(200 * time.Millisecond)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// unmountUnder detaches every mount below root, deepest first.
func unmountUnder(root string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], root+"/") {
			mounts = append(mounts, fields[4])
		}
	}
	_ = f.Close()
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}
