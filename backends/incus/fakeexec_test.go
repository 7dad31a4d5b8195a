package incus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeExec serves Incus's exec API on a unix socket, as Incus 6.0 runs
// it with wait-for-websocket: an exec operation runs its command only once
// all its websockets are connected, and fails ("Timed out waiting for
// websockets to connect") when they are not all in within connectWithin;
// a websocket of an operation that is no longer running is answered 500.
// Each websocket is accepted only once all of its operation's dials have
// arrived, so a client that dials them one after another never gets
// them all.
type fakeExec struct {
	connectWithin time.Duration
	// refuse, when it says so, answers that dial 500 and fails the
	// operation (as if it had timed out just then).
	refuse func(attempt int, fd string) bool
	// lateControl: as Incus 6.0 runs a non-interactive exec, the command
	// starts once fds 0, 1 and 2 are in, and the control dial arrives only
	// after the (short) command ended: it is answered 500.
	lateControl bool

	mu   sync.Mutex
	ops  map[string]*fakeOp
	runs int // commands run
}

type fakeOp struct {
	id      string
	attempt int
	secrets map[string]string // secret → fd
	arrived int
	allIn   chan struct{} // every dial arrived
	conns   map[string]*websocket.Conn
	ran     chan struct{} // the command wrote its output
	ended   chan struct{}
	once    sync.Once
	err     string // set before ended closes: the failure
}

var execFds = []string{"control", "0", "1", "2"}

func serveFakeExec(t *testing.T, f *fakeExec) *Backend {
	t.Helper()
	f.ops = map[string]*fakeOp{}
	socket := filepath.Join(t.TempDir(), "incus.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /1.0/instances/{name}/exec", f.exec)
	mux.HandleFunc("GET /1.0/operations/{id}/websocket", f.websocket)
	mux.HandleFunc("GET /1.0/operations/{id}/wait", f.wait)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return &Backend{cli: newClient(socket, "")}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeExec) exec(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	op := &fakeOp{id: fmt.Sprintf("op%d", len(f.ops)+1), attempt: len(f.ops) + 1, secrets: map[string]string{},
		allIn: make(chan struct{}), conns: map[string]*websocket.Conn{}, ran: make(chan struct{}), ended: make(chan struct{})}
	fds := map[string]string{}
	for _, fd := range execFds {
		secret := op.id + "-" + fd
		op.secrets[secret], fds[fd] = fd, secret
	}
	f.ops[op.id] = op
	f.mu.Unlock()
	go func() {
		select {
		case <-op.allIn:
		case <-time.After(f.connectWithin):
			op.fail("Timed out waiting for websockets to connect")
		case <-op.ended:
		}
	}()
	meta, _ := json.Marshal(map[string]any{"fds": fds})
	writeJSON(w, http.StatusAccepted, map[string]any{"type": "async", "status": "Operation created", "operation": "/1.0/operations/" + op.id,
		"metadata": operation{ID: op.id, Class: "websocket", Status: "Running", Metadata: meta}})
}

func (op *fakeOp) fail(msg string) {
	op.once.Do(func() { op.err = msg; close(op.ended) })
}

func (f *fakeExec) websocket(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	op := f.ops[r.PathValue("id")]
	var fd string
	if op != nil {
		fd = op.secrets[r.URL.Query().Get("secret")]
	}
	refused := op != nil && f.refuse != nil && f.refuse(op.attempt, fd)
	late := op != nil && f.lateControl && fd == "control"
	if op != nil && !refused && !late {
		if op.arrived++; op.arrived == f.awaited() {
			close(op.allIn)
		}
	}
	f.mu.Unlock()
	notRunning := func() {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"type": "error", "error": "Only running operations can be connected", "error_code": 500})
	}
	switch {
	case op == nil || fd == "":
		writeJSON(w, http.StatusNotFound, map[string]any{"type": "error", "error": "Operation not found", "error_code": 404})
		return
	case refused:
		op.fail("Timed out waiting for websockets to connect")
		notRunning()
		return
	case late:
		select {
		case <-op.ran:
		case <-op.ended:
		}
		notRunning()
		return
	}
	select {
	case <-op.allIn:
	case <-op.ended:
		notRunning()
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	f.mu.Lock()
	op.conns[fd] = c
	ready := len(op.conns) == f.awaited()
	f.mu.Unlock()
	if ready {
		go f.run(op)
	}
}

// awaited is how many websockets an operation waits for.
func (f *fakeExec) awaited() int {
	if f.lateControl {
		return len(execFds) - 1
	}
	return len(execFds)
}

// run runs the command: "x\n" on stdout, then every websocket closes.
func (f *fakeExec) run(op *fakeOp) {
	f.mu.Lock()
	f.runs++
	f.mu.Unlock()
	ctx := context.Background()
	for _, fd := range []string{"control", "0"} { // read what the client sends (stdin's end)
		if op.conns[fd] == nil {
			continue
		}
		go func() {
			for {
				if _, _, err := op.conns[fd].Read(ctx); err != nil {
					return
				}
			}
		}()
	}
	_ = op.conns["1"].Write(ctx, websocket.MessageBinary, []byte("x\n"))
	close(op.ran)
	for _, fd := range []string{"1", "2", "0", "control"} {
		if c := op.conns[fd]; c != nil {
			_ = c.Close(websocket.StatusNormalClosure, "")
		}
	}
	op.once.Do(func() { close(op.ended) })
}

func (f *fakeExec) wait(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	op := f.ops[r.PathValue("id")]
	f.mu.Unlock()
	if op == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"type": "error", "error": "Operation not found", "error_code": 404})
		return
	}
	<-op.ended
	res := operation{ID: op.id, Class: "websocket", Status: "Success", Metadata: json.RawMessage(`{"return":0}`)}
	if op.err != "" {
		res.Status, res.Err, res.Metadata = "Failure", op.err, nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": "sync", "status": "Success", "metadata": res})
}

func runFakeExec(t *testing.T, f *fakeExec) (int, string, error) {
	t.Helper()
	b := serveFakeExec(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	code, err := b.execOp(ctx, "c1", execPost{Command: []string{"echo", "x"}, WaitForWebsocket: true}, streams{stdout: &out})
	return code, out.String(), err
}

// Locks down a flake of the incus lanes: Incus fails an exec whose
// websockets are not all connected within 10 s, and one dial after
// another took longer on a loaded host. They are dialed at once.
func TestExecDialsWebsocketsAtOnce(t *testing.T) {
	f := &fakeExec{connectWithin: 5 * time.Second}
	code, out, err := runFakeExec(t, f)
	if err != nil || code != 0 || out != "x\n" {
		t.Fatalf("exec: exit %d, output %q, err %v; want 0, \"x\\n\"", code, out, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ops) != 1 {
		t.Errorf("%d exec operations, want 1", len(f.ops))
	}
}

// Locks down a flake of the incus lanes: a websocket dial answered 500
// (the operation had stopped running before all connected) means the
// command never ran: it is started again, and runs once.
func TestExecRetriedAfterRefusedDial(t *testing.T) {
	f := &fakeExec{connectWithin: 30 * time.Second, refuse: func(attempt int, fd string) bool { return attempt == 1 && fd == "1" }}
	code, out, err := runFakeExec(t, f)
	if err != nil || code != 0 || out != "x\n" {
		t.Fatalf("exec: exit %d, output %q, err %v; want 0, \"x\\n\"", code, out, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ops) != 2 || f.runs != 1 {
		t.Errorf("%d exec operations, %d commands run; want 2 and 1", len(f.ops), f.runs)
	}
}

// Locks down a flake of the incus lane (TestContract/process_configuration:
// "control websocket: … Only running operations can be connected"): a
// short non-interactive command ran and ended once its data websockets
// were in, before the control one was. Its output and exit code count;
// the command is not run again.
func TestExecShortCommandBeforeControl(t *testing.T) {
	f := &fakeExec{connectWithin: 30 * time.Second, lateControl: true}
	code, out, err := runFakeExec(t, f)
	if err != nil || code != 0 || out != "x\n" {
		t.Fatalf("exec: exit %d, output %q, err %v; want 0, \"x\\n\"", code, out, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs != 1 {
		t.Errorf("%d commands run, want 1", f.runs)
	}
}
