package monitor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
)

// The control protocol on monitor.sock: one JSON request per connection,
// one JSON response back.
//
//	{"op":"status"}                              → {"record":{...}}
//	{"op":"stop","signal":15,"timeout":10000000000} → {"record":{...}} once final
//	{"op":"kill","signal":1}                     → {"record":{...}}
//	{"op":"attach","stdin":true}                 → {"record":{...}}, then a stream (attach.go)
//	{"op":"resize","width":80,"height":24}       → {"record":{...}}
//
// signal 0 and a missing timeout (nanoseconds) take the record's stop
// signal and grace. An error is {"error":"...","kind":"conflict"}, kind
// naming the errdefs class.
const (
	opStatus = "status"
	opStop   = "stop"
	opKill   = "kill"
)

type request struct {
	Op      string         `json:"op"`
	Signal  syscall.Signal `json:"signal,omitempty"`
	Timeout *time.Duration `json:"timeout,omitempty"`
	Stdin   bool           `json:"stdin,omitempty"`  // attach
	Width   uint32         `json:"width,omitempty"`  // resize
	Height  uint32         `json:"height,omitempty"` // resize
}

type response struct {
	Record *Record `json:"record,omitempty"`
	Error  string  `json:"error,omitempty"`
	Kind   string  `json:"kind,omitempty"`
}

// requestTimeout bounds how long a client may take to send its request
// or read the answer, so a stuck client cannot pin a handler.
const requestTimeout = 5 * time.Second

func (m *monitor) serve() {
	defer close(m.served)
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return // closed by finish
		}
		m.handlers.Go(func() { m.handle(c) })
	}
}

func (m *monitor) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(requestTimeout)) // fails only on a closed connection: so does the read
	var req request
	var resp response
	err := json.NewDecoder(io.LimitReader(c, 64<<10)).Decode(&req)
	if err == nil {
		err = m.do(req)
	}
	if err != nil {
		resp.Error, resp.Kind = err.Error(), errKind(err)
	} else {
		r := m.snapshot()
		resp.Record = &r
	}
	_ = c.SetWriteDeadline(time.Now().Add(requestTimeout)) // likewise for the write
	if json.NewEncoder(c).Encode(resp) == nil && err == nil && req.Op == opAttach {
		m.attach(c, req)
	}
}

// snapshot is the record as the monitor knows it now.
func (m *monitor) snapshot() Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rec // values are replaced, never edited in place: a shallow copy is safe
}

func (m *monitor) do(req request) error {
	if req.Signal < 0 || req.Signal > 64 {
		return fmt.Errorf("%w: %d is not a Linux signal", errdefs.ErrInvalidArgument, int(req.Signal))
	}
	switch req.Op {
	case opStatus:
		return nil
	case opStop:
		if req.Timeout != nil && *req.Timeout < 0 {
			return fmt.Errorf("%w: stop timeout %v is negative", errdefs.ErrInvalidArgument, *req.Timeout)
		}
		m.requestStop(req.Signal, req.Timeout, false)
		<-m.done // the stop either ends the process or SIGKILLs it
		return nil
	case opKill:
		return m.kill(req.Signal)
	case opAttach:
		if m.snapshot().State.Status != StatusRunning {
			return fmt.Errorf("%w: container %s is not running", errdefs.ErrConflict, m.rec.ID)
		}
		return nil
	case opResize:
		return m.resize(req.Width, req.Height)
	}
	return fmt.Errorf("%w: unknown monitor request %q", errdefs.ErrInvalidArgument, req.Op)
}

// errKind names an error's errdefs class for the wire.
func errKind(err error) string {
	switch {
	case errdefs.IsConflict(err):
		return "conflict"
	case errdefs.IsInvalidArgument(err):
		return "invalid"
	case errdefs.IsNotFound(err):
		return "notfound"
	case errdefs.IsUnavailable(err):
		return "unavailable"
	case errdefs.IsFailedPrecondition(err):
		return "precondition"
	}
	return ""
}

// kindClass is errKind's inverse.
func kindClass(kind string) error {
	switch kind {
	case "conflict":
		return errdefs.ErrConflict
	case "invalid":
		return errdefs.ErrInvalidArgument
	case "notfound":
		return errdefs.ErrNotFound
	case "unavailable":
		return errdefs.ErrUnavailable
	case "precondition":
		return errdefs.ErrFailedPrecondition
	}
	return nil
}

// remoteError is an error the monitor reported: its text, its class.
type remoteError struct {
	msg   string
	class error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.class }

func fromRemote(msg, kind string) error {
	if class := kindClass(kind); class != nil {
		return &remoteError{msg: msg, class: class}
	}
	return errors.New(msg)
}
