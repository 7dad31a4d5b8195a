package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary plays the monitor (and a spawner that exits right
// after Spawn) when re-executed with roleEnv set: the standard stand-in
// for the hidden `cornus monitor` subcommand.
const roleEnv = "MONITOR_TEST_ROLE"

// failScript makes shTask.Start fail, as a runtime missing an image would.
const failScript = "FAIL"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "monitor":
		os.Exit(monitorMain(os.Args[1:]))
	case "spawner":
		os.Exit(spawnerMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// monitorMain is what `cornus monitor` will be: args are records dir, id,
// script.
func monitorMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: monitor RECORDS ID SCRIPT")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := Run(ctx, RunOptions{Store: NewStore(args[0]), ID: args[1], Task: newShTask(args[0], args[1], args[2])})
	if err != nil {
		fmt.Fprintln(os.Stderr, "monitor:", err)
		return 1
	}
	return 0
}

// spawnerMain spawns a monitor and exits, printing the record: args are
// records dir, record JSON, script.
func spawnerMain(args []string) int {
	var rec Record
	if len(args) != 3 || json.Unmarshal([]byte(args[1]), &rec) != nil {
		fmt.Fprintln(os.Stderr, "usage: spawner RECORDS RECORD-JSON SCRIPT")
		return 2
	}
	r, err := Spawn(context.Background(), spawnOptions(args[0], rec, args[2]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fmt.Fprintln(os.Stderr, "spawner:", err)
		return 1
	}
	return 0
}

// spawnOptions start this test binary as the monitor of rec.
func spawnOptions(records string, rec Record, script string) SpawnOptions {
	exe, _ := os.Executable()
	return SpawnOptions{
		Store:  NewStore(records),
		Record: rec,
		Path:   exe,
		Args:   []string{records, rec.ID, script},
		Env:    append(withoutVar(os.Environ(), roleEnv), roleEnv+"=monitor"),
	}
}

// shTask runs the "container" as /bin/sh -c script in its own process
// group, signalled as a group the way a container's processes are, and
// notes each pid in <records>/<id>.pids so cleanup can kill it whatever
// happened to the monitor.
type shTask struct {
	script, pids string
}

func newShTask(records, id, script string) *shTask {
	return &shTask{script: script, pids: filepath.Join(records, id+".pids")}
}

func (t *shTask) Start(ctx context.Context, stdio Stdio) (Process, error) {
	if t.script == failScript {
		return nil, errors.New("no such image: test/fail")
	}
	cmd := exec.Command("/bin/sh", "-c", t.script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(t.pids, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		fmt.Fprintln(f, cmd.Process.Pid)
		f.Close()
	}
	return &shProcess{cmd: cmd}, nil
}

func (t *shTask) Exec(ctx context.Context, argv []string, out io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 100 * time.Millisecond // a killed shell's children may hold the pipe
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && ctx.Err() == nil {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

type shProcess struct{ cmd *exec.Cmd }

func (p *shProcess) Pid() int { return p.cmd.Process.Pid }

func (p *shProcess) Signal(sig syscall.Signal) error {
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

func (p *shProcess) Wait(context.Context) (Exit, error) {
	_ = p.cmd.Wait() // an exit status is no error here; the state says it
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return Exit{}, errors.New("no wait status")
	}
	if ws.Signaled() {
		return Exit{Code: 128 + int(ws.Signal())}, nil
	}
	return Exit{Code: ws.ExitStatus()}, nil
}

// killLeftovers kills a spawned monitor and every process group the task
// started: registered as a cleanup, it runs even when a test fails.
func killLeftovers(records, id string) {
	if r, err := NewStore(records).Read(id); err == nil && r.Monitor.Pid != os.Getpid() && Alive(r) {
		_ = syscall.Kill(r.Monitor.Pid, syscall.SIGKILL) // best effort: it may be gone
	}
	data, _ := os.ReadFile(filepath.Join(records, id+".pids"))
	for _, s := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(s); err == nil && pid > 1 {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // best effort: the group may be gone
		}
	}
}

// inProcess is Run in a goroutine of the test, for behaviour that needs
// no detached process.
type inProcess struct {
	store *Store
	id    string
	dir   string
	done  chan struct{} // closed when Run has returned err
	err   error
}

// result waits for Run to return, within bounds.
func (p *inProcess) result(t *testing.T) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// startRun writes rec (ID defaulted) and runs a monitor for it with
// script as the container. The container gets a 2 s grace unless rec
// says otherwise, so cleanup is quick.
func startRun(t *testing.T, rec Record, script string) *inProcess {
	t.Helper()
	records := t.TempDir()
	if rec.ID == "" {
		rec.ID = "c1"
	}
	if rec.Supervision.StopGrace == nil {
		rec.Supervision.StopGrace = ptr(2 * time.Second)
	}
	store := NewStore(records)
	rec.Desired, rec.State = DesiredRunning, State{Status: StatusCreated}
	if err := store.Write(rec); err != nil {
		t.Fatal(err)
	}
	dir, _ := store.Dir(rec.ID)
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProcess{store: store, id: rec.ID, dir: dir, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = Run(ctx, RunOptions{Store: store, ID: rec.ID, Task: newShTask(records, rec.ID, script)})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Error("Run did not return after its context ended")
		}
		killLeftovers(records, rec.ID)
	})
	// As Spawn does, return once the monitor has taken the record over.
	waitFor(t, 20*time.Second, "the monitor to start", func() bool {
		r, err := store.Read(rec.ID)
		return err == nil && (r.Monitor.Pid != 0 || r.Final())
	})
	return p
}

func (p *inProcess) read(t *testing.T) Record {
	t.Helper()
	r, err := p.store.Read(p.id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// waitFor polls cond until it holds or the (generous) timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait is Wait with a generous bound.
func wait(t *testing.T, dir string) Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Wait(ctx, dir)
	if err != nil {
		t.Fatalf("wait: %v (record %+v)", err, r.State)
	}
	return r
}

// logText is the container's output so far, stdout and stderr merged.
func logText(t *testing.T, dir string) string {
	t.Helper()
	var b syncBuffer
	if err := Logs(context.Background(), dir, LogOptions{Tail: -1, Stdout: &b}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func ptr[T any](v T) *T { return &v }
