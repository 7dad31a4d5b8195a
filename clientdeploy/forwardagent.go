package clientdeploy

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/server/client"
)

// ForwardAgent serves the caller's ssh-agent ($SSH_AUTH_SOCK) to exec
// --forward-agent on a session of its own, and returns what closes it.
// Refused up front where it cannot work: a local deployment, no agent.
func (se *Session) ForwardAgent(ctx context.Context, project string) (func(), error) {
	if se.remote == nil {
		return nil, fmt.Errorf("%w: --forward-agent relays your ssh-agent to a deployment of a cornus server in remote mode (--server); this project runs on this machine, where the agent's socket can be bind-mounted instead",
			errdefs.ErrNotImplemented)
	}
	sock := envlist.Get(se.streams.Environ, "SSH_AUTH_SOCK")
	if sock == "" {
		sock = client.DefaultAgentSocket
	}
	if sock == "" {
		return nil, fmt.Errorf("%w: --forward-agent: SSH_AUTH_SOCK is not set (start ssh-agent and ssh-add your keys)", errdefs.ErrInvalidArgument)
	}
	if err := client.CheckAgent(sock); err != nil {
		return nil, err
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
