package client

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
)

// ForwardAgent serves the ssh-agent at socket (the caller's
// SSH_AUTH_SOCK, or on Windows the OpenSSH agent's named pipe) on s: each OpAgent stream the server opens (a
// connection to the exec's forwarded socket) is carried to it.
func (s *Session) ForwardAgent(socket string) {
	s.Handle(api.OpAgent, func(h api.StreamHeader, st net.Conn) {
		defer st.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := dialAgent(ctx, socket)
		cancel()
		if err != nil {
			Reply(st, fmt.Errorf("%w: the caller's ssh-agent: %v", errdefs.ErrUnavailable, err))
			return
		}
		defer c.Close()
		Reply(st, nil)
		streamcopy.Pipe(st, c)
	})
}
