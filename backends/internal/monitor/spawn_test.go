package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// longID is containerd-style: 64 hex digits.
const longID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

const ticker = `trap 'exit 0' TERM; i=0; while :; do i=$((i+1)); echo tick$i; sleep 0.05; done`

func spawnCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// spawn spawns a monitor of this test binary and registers its cleanup.
func spawn(t *testing.T, records string, rec Record, script string) (Record, error) {
	t.Helper()
	t.Cleanup(func() { killLeftovers(records, rec.ID) })
	return Spawn(spawnCtx(t), spawnOptions(records, rec, script))
}

// Locks down detachment: a monitor spawned by a process that then exits
// keeps supervising (output still logged, stop still answered), and a
// later process finds it again from the record alone.
func TestSpawnOutlivesSpawner(t *testing.T) {
	t.Parallel()
	// A deep records directory: the socket path must pass sun_path's
	// 108 bytes, as it may under a real data directory.
	records := filepath.Join(t.TempDir(), strings.Repeat("d", 40))
	rec := Record{ID: longID, Name: "web-1", Labels: map[string]string{"app": "web"}}
	t.Cleanup(func() { killLeftovers(records, rec.ID) })
	arg, _ := json.Marshal(rec)
	exe, _ := os.Executable()
	spawner := exec.CommandContext(spawnCtx(t), exe, records, string(arg), ticker)
	spawner.Env = append(withoutVar(os.Environ(), roleEnv), roleEnv+"=spawner")
	// Output returns only once every holder of the spawner's stdout has
	// closed it: a monitor that kept it would hang here.
	out, err := spawner.Output()
	if err != nil {
		t.Fatalf("spawner: %v: %s", err, err.(*exec.ExitError).Stderr)
	}
	exited := time.Now()
	var spawned Record
	if err := json.Unmarshal(out, &spawned); err != nil {
		t.Fatalf("spawner output %q: %v", out, err)
	}
	if spawned.State.Status != StatusRunning || spawned.Monitor.Pid == spawner.Process.Pid || !Alive(spawned) {
		t.Fatalf("spawned: %+v, monitor %+v (spawner pid %d)", spawned.State, spawned.Monitor, spawner.Process.Pid)
	}
	if sid := sessionOf(t, spawned.Monitor.Pid); sid != strconv.Itoa(spawned.Monitor.Pid) {
		t.Errorf("monitor session %s: want its own session", sid)
	}

	store := NewStore(records)
	dir, _ := store.Dir(rec.ID)
	if n := len(filepath.Join(dir, socketName)); n < sunPathMax {
		t.Fatalf("socket path of %d bytes does not test the long-path case", n)
	}
	found, err := store.Read(rec.ID)
	if err != nil || !Alive(found) || found.Monitor != spawned.Monitor || found.Labels["app"] != "web" {
		t.Fatalf("found again: %v, %+v", err, found.Monitor)
	}
	waitFor(t, 20*time.Second, "output after the spawner exited", func() bool {
		for _, e := range readEntries(t, filepath.Join(dir, logName)) {
			if e.Time.After(exited.Add(100 * time.Millisecond)) {
				return true
			}
		}
		return false
	})
	st, err := Status(spawnCtx(t), dir)
	if err != nil || st.Monitor.Pid != spawned.Monitor.Pid || st.State.Pid != spawned.State.Pid {
		t.Fatalf("status: %v, %+v", err, st)
	}
	r, err := Stop(spawnCtx(t), dir, StopOptions{})
	if err != nil || r.State.ExitCode != 0 || r.State.Status != StatusExited {
		t.Fatalf("stop: %v, %+v", err, r.State)
	}
	waitFor(t, 20*time.Second, "the monitor process to exit", func() bool {
		_, running, err := processStart(spawned.Monitor.Pid)
		return err != nil || !running
	})
	if _, err := os.Stat(filepath.Join(dir, socketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

// Locks down a monitor that dies (kill -9): Alive says so, Stop, Wait and
// Status report ErrNoMonitor (Unavailable) so the backend can act, and a
// new Spawn takes over the record.
func TestKilledMonitor(t *testing.T) {
	t.Parallel()
	records := t.TempDir()
	rec := Record{ID: "k"}
	r, err := spawn(t, records, rec, ticker)
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(r) {
		t.Fatalf("spawned monitor not alive: %+v", r.Monitor)
	}
	if _, err := spawn(t, records, rec, ticker); !errdefs.IsConflict(err) {
		t.Fatalf("second spawn over a live monitor: %v, want Conflict", err)
	}
	if err := syscall.Kill(r.Monitor.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "Alive to turn false", func() bool { return !Alive(r) })
	dir, _ := NewStore(records).Dir(rec.ID)
	if _, err := Stop(spawnCtx(t), dir, StopOptions{}); !errors.Is(err, ErrNoMonitor) || !errdefs.IsUnavailable(err) {
		t.Fatalf("stop without a monitor: %v, want ErrNoMonitor", err)
	}
	if _, err := Wait(spawnCtx(t), dir); !errors.Is(err, ErrNoMonitor) {
		t.Fatalf("wait without a monitor: %v", err)
	}
	if _, err := Status(spawnCtx(t), dir); !errors.Is(err, ErrNoMonitor) {
		t.Fatalf("status without a monitor: %v", err)
	}
	again, err := spawn(t, records, rec, ticker)
	if err != nil || !Alive(again) || again.Monitor.Pid == r.Monitor.Pid {
		t.Fatalf("respawn: %v, %+v", err, again.Monitor)
	}
	if _, err := Stop(spawnCtx(t), dir, StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Locks down start failures: the runtime's error comes back from Spawn
// and stays in the final record; a monitor that dies before reporting
// is an error quoting monitor.log.
func TestSpawnStartFailure(t *testing.T) {
	t.Parallel()
	records := t.TempDir()
	r, err := spawn(t, records, Record{ID: "f"}, failScript)
	if err == nil || !strings.Contains(err.Error(), "no such image") {
		t.Fatalf("spawn: %v", err)
	}
	if r.State.Status != StatusExited || r.State.ExitCode != 128 || !strings.Contains(r.State.Error, "no such image") || Alive(r) {
		t.Fatalf("record after a failed start: %+v", r.State)
	}

	opts := spawnOptions(records, Record{ID: "early"}, "true")
	opts.Args = opts.Args[:1] // the monitor refuses its arguments
	t.Cleanup(func() { killLeftovers(records, "early") })
	if _, err := Spawn(spawnCtx(t), opts); err == nil || !strings.Contains(err.Error(), "exited before starting it: usage") {
		t.Fatalf("spawn of a monitor that dies early: %v", err)
	}
	bad := Record{ID: "bad", Supervision: Supervision{Restart: RestartPolicy{Name: "sometimes"}}}
	if _, err := Spawn(spawnCtx(t), spawnOptions(records, bad, "true")); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("spawn of an invalid record: %v", err)
	}
}

// sessionOf reads a process's session id (field 6 of /proc/<pid>/stat).
func sessionOf(t *testing.T, pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return f[3]
}

// Locks down a monitor told to quit (SIGTERM, as at shutdown): it stops
// the container gracefully, writes the final record and exits, leaving
// the desired state running (the user did not stop it).
func TestMonitorQuitStopsContainer(t *testing.T) {
	t.Parallel()
	records := t.TempDir()
	r, err := spawn(t, records, Record{ID: "q", Supervision: Supervision{Restart: RestartPolicy{Name: spec.RestartAlways}}}, ticker)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := NewStore(records).Dir("q")
	waitFor(t, 20*time.Second, "the trap", func() bool { return strings.Contains(logText(t, dir), "tick1") })
	if err := syscall.Kill(r.Monitor.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	final, err := Wait(spawnCtx(t), dir)
	if err != nil || final.State.Status != StatusExited || final.State.ExitCode != 0 || final.Desired != DesiredRunning || final.State.RestartCount != 0 {
		t.Fatalf("after SIGTERM to the monitor: %v, %+v desired %s", err, final.State, final.Desired)
	}
}
