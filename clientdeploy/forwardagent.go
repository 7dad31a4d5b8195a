package clientdeploy

import (
	"context"
	"fmt"
	"os"

	"github.com/containerd/errdefs"
)

// ForwardAgent serves the caller's ssh-agent ($SSH_AUTH_SOCK) to exec
// --forward-agent on a session of its own, and returns what closes it.
// Refused up front where it cannot work: a local deployment, no agent.
func (se *Session) ForwardAgent(ctx context.Context, project string) (func(), error) {
	if se.remote == nil {
		return nil, fmt.Errorf("%w: --forward-agent relays your ssh-agent to a deployment of a cornus server in remote mode (--server); this project runs on this machine, where the agent's socket can be bind-mounted instead",
			errdefs.ErrNotImplemented)
	}
	sock := getenv(se.streams.Environ, "SSH_AUTH_SOCK")
	if sock == "" {
		return nil, fmt.Errorf("%w: --forward-agent: SSH_AUTH_SOCK is not set (start ssh-agent and ssh-add your keys)", errdefs.ErrInvalidArgument)
	}
	if st, err := os.Stat(sock); err != nil || st.Mode().Type() != os.ModeSocket {
		return nil, fmt.Errorf("%w: --forward-agent: SSH_AUTH_SOCK %s is not a socket", errdefs.ErrInvalidArgument, sock)
	}
	// Detached: it ties no deployment; it carries the agent only.
	sess, err := se.remote.client.OpenSession(ctx, project, true)
	if err != nil {
		return nil, fmt.Errorf("--forward-agent: %w", err)
	}
	sess.ForwardAgent(sock)
	se.remote.projects.AgentSession = sess.ID
	return func() { _ = sess.Close() }, nil
}
