package main

import (
	"context"
	"net"

	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
)

// localReach reaches project's workloads through this host's backend.
func localReach(ctx context.Context, s streams, project string) (client.Dialer, func(), error) {
	b, err := fromenv.Open(ctx, s.Environ)
	if err != nil {
		return nil, nil, err
	}
	return localDialer{e: engine.New(b, engine.WithEnviron(s.Environ)), project: project}, func() { _ = b.Close() }, nil
}

// localDialer reaches workloads from this host.
type localDialer struct {
	e       *engine.Engine
	project string
}

func (l localDialer) Dial(ctx context.Context, d api.Dial) (net.Conn, error) {
	return server.DialWorkload(ctx, l.e.Backend(), l.e, l.project, d)
}
