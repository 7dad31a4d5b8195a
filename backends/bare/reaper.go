package bare

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A monitor is a child subreaper, so besides the container's init it
// inherits every process the runtime orphans: runc's intermediate
// processes (runc:[1:CHILD]) and, when a `runc exec` ends before its
// process, that process. Left as zombies they pin the container's PID
// namespace — its init, on exit, waits for every pid of the namespace to
// be reaped — so a stop would never finish. reapOrphans reaps them: on
// SIGCHLD and every few seconds, every zombie child that is one of runc's
// own (runc:[0:PARENT], runc:[1:CHILD], ...) or lives in a PID namespace
// below ours (an exec'd process) — never the init (process.reap waits for
// it), never what this process started itself with os/exec (the runtime,
// iptables, CNI plugins: os/exec waits for those, and they live in our
// namespace under their own names). lock is held by a start from before
// the runtime creates the init until its pid is known.

// reapInterval is how often orphans are looked for without a SIGCHLD.
const reapInterval = 5 * time.Second

func reapOrphans(ctx context.Context, lock sync.Locker, initPid func() int) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	t := time.NewTicker(reapInterval)
	defer t.Stop()
	self := os.Getpid()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sigs:
		case <-t.C:
		}
		lock.Lock()
		for _, pid := range zombieChildren(self) {
			if pid != initPid() && orphan(pid) {
				var ws unix.WaitStatus
				_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			}
		}
		lock.Unlock()
	}
}

// orphan reports whether a zombie child is one the runtime left us: runc's
// intermediate processes by name, exec'd processes by their namespace.
func orphan(pid int) bool {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Name:"); ok && strings.HasPrefix(strings.TrimSpace(v), "runc:[") {
			return true
		}
		if v, ok := strings.CutPrefix(l, "NSpid:"); ok && len(strings.Fields(v)) > 1 {
			return true
		}
	}
	return false
}

// zombieChildren lists the zombie children of pid.
func zombieChildren(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			c, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			stat, err := os.ReadFile("/proc/" + f + "/stat")
			if err != nil {
				continue
			}
			// pid (comm) S ...: the state follows the last ')'.
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
				out = append(out, c)
			}
		}
	}
	return out
}
