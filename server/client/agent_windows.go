package client

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/windows"
)

// DefaultAgentSocket is the Windows OpenSSH agent's named pipe (service
// ssh-agent), used when SSH_AUTH_SOCK names none.
const DefaultAgentSocket = `\\.\pipe\openssh-ssh-agent`

// isPipe: a named pipe's path, not an AF_UNIX socket's (Windows has both;
// Git for Windows' and WSL's agents use sockets).
func isPipe(socket string) bool { return strings.HasPrefix(socket, `\\.\pipe\`) }

func dialAgent(ctx context.Context, socket string) (net.Conn, error) {
	if !isPipe(socket) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	// Overlapped, so the runtime reads and writes it at once (a
	// synchronous pipe handle serializes them and the relay would stall).
	f, err := os.OpenFile(socket, os.O_RDWR|windows.FILE_FLAG_OVERLAPPED, 0)
	if err != nil {
		return nil, err
	}
	return pipeConn{f}, nil
}

// CheckAgent says whether socket can be an ssh-agent: a pipe that opens
// (the agent service runs), or a socket file.
func CheckAgent(socket string) error {
	if isPipe(socket) {
		c, err := dialAgent(context.Background(), socket)
		if err != nil {
			return fmt.Errorf("%w: --forward-agent: the OpenSSH agent's pipe %s: %v (start the ssh-agent service: Start-Service ssh-agent, and ssh-add your keys)",
				errdefs.ErrUnavailable, socket, err)
		}
		return c.Close()
	}
	if _, err := os.Stat(socket); err != nil {
		return fmt.Errorf("%w: --forward-agent: SSH_AUTH_SOCK %s: %v", errdefs.ErrInvalidArgument, socket, err)
	}
	return nil
}

// pipeConn is a named pipe as a net.Conn.
type pipeConn struct{ *os.File }

func (p pipeConn) LocalAddr() net.Addr  { return pipeAddr(p.Name()) }
func (p pipeConn) RemoteAddr() net.Addr { return pipeAddr(p.Name()) }

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }
