package caretaker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
)

// Bounds of the agent role.
const (
	maxAgentSockets = 32 // forwarded agents at once (execs with --forward-agent)
	maxAgentConns   = 64 // connections to one socket at once
)

// AgentSocket is the path, in the app, of the socket of forwarded agent
// id (its SSH_AUTH_SOCK).
func AgentSocket(id string) string { return AgentDir + "/" + id + ".sock" }

// ValidAgentID reports whether id may name a socket: 1-64 letters and
// digits.
func ValidAgentID(id string) bool {
	if id == "" || len(id) > api.MaxAgentID {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// agentRole serves forwarded ssh-agents: for each OpAgent stream the
// server opens (one exec --forward-agent), a socket in the shared
// volume's agent directory, which the app sees at AgentDir; each
// connection to it goes back over the relay to the caller's agent. The
// socket goes when the stream ends (the exec ended).
type agentRole struct {
	ctx   context.Context
	dir   string
	relay *serverRelay
	log   *slog.Logger

	mu   sync.Mutex
	live int
}

func (a *agentRole) serve(h api.StreamHeader, st net.Conn) {
	defer st.Close()
	if h.Agent == nil || !ValidAgentID(h.Agent.ID) {
		client.Reply(st, fmt.Errorf("%w: an agent stream needs an id of 1-%d letters and digits", errdefs.ErrInvalidArgument, api.MaxAgentID))
		return
	}
	a.mu.Lock()
	full := a.live >= maxAgentSockets
	if !full {
		a.live++
	}
	a.mu.Unlock()
	if full {
		client.Reply(st, fmt.Errorf("%w: %d forwarded agents already", errdefs.ErrUnavailable, maxAgentSockets))
		return
	}
	defer func() { a.mu.Lock(); a.live--; a.mu.Unlock() }()
	id := h.Agent.ID
	path := filepath.Join(a.dir, id+".sock")
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		client.Reply(st, fmt.Errorf("agent socket: %w", err))
		return
	}
	defer os.Remove(path)
	defer ln.Close()
	// Whoever runs the exec (any user of the app) may use it while the
	// exec lives, as with ssh -A.
	if err := os.Chmod(path, 0o777); err != nil {
		client.Reply(st, fmt.Errorf("agent socket: %w", err))
		return
	}
	client.Reply(st, nil)
	go func() {
		_, _ = io.Copy(io.Discard, st) // until the server ends the exec
		ln.Close()
	}()
	slots := make(chan struct{}, maxAgentConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			c.Close()
			continue
		}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			up, err := a.relay.Open(a.ctx, api.StreamHeader{Op: api.OpAgent, Agent: &api.AgentOpen{ID: id}})
			if err != nil {
				a.log.Warn("forwarded agent", "id", id, "error", err.Error())
				return
			}
			defer up.Close()
			streamcopy.Pipe(c, up)
		}()
	}
}
