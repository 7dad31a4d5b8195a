//go:build !windows

package client

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/containerd/errdefs"
)

// DefaultAgentSocket is the agent used when SSH_AUTH_SOCK names none:
// none here (ssh-agent says where it listens).
const DefaultAgentSocket = ""

func dialAgent(ctx context.Context, socket string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", socket)
}

// CheckAgent says whether socket can be an ssh-agent.
func CheckAgent(socket string) error {
	if st, err := os.Stat(socket); err != nil || st.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%w: --forward-agent: SSH_AUTH_SOCK %s is not a socket", errdefs.ErrInvalidArgument, socket)
	}
	return nil
}
