package bare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// consoleSocket receives a container's terminal from the runtime
// (--console-socket): the pty master, passed with SCM_RIGHTS.
type consoleSocket struct {
	path string
	l    *net.UnixListener
}

// newConsoleSocket listens on a fresh socket under the temporary directory
// (a socket path must be short; the bundle's may not be).
func newConsoleSocket() (*consoleSocket, error) {
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	path := filepath.Join(os.TempDir(), "cornus-console-"+hex.EncodeToString(buf)+".sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("console socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("console socket: %w", err)
	}
	return &consoleSocket{path: path, l: l}, nil
}

func (c *consoleSocket) Close() error {
	err := c.l.Close()
	_ = os.Remove(c.path)
	return err
}

// receive accepts the runtime's connection and returns the master; it
// gives up when the runtime exits without sending one.
func (c *consoleSocket) receive(ctx context.Context, exited <-chan struct{}) (*os.File, error) {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-exited:
			_ = c.l.SetDeadline(time.Now())
		case <-stop:
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.l.SetDeadline(deadline)
	conn, err := c.l.AcceptUnix()
	if err != nil {
		return nil, fmt.Errorf("receive the container's terminal: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := conn.ReadMsgUnix(name, oob)
	if err != nil {
		return nil, fmt.Errorf("receive the container's terminal: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("receive the container's terminal: no descriptor (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("receive the container's terminal: no descriptor (%v)", err)
	}
	unix.CloseOnExec(fds[0])
	return os.NewFile(uintptr(fds[0]), "console"), nil
}
