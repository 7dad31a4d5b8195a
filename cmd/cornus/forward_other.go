//go:build !linux

package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/cornus-dev/cornus/server/client"
)

// localReach off Linux: the workloads' networks are a Linux host's;
// port-forward and tunnel reach them through a server.
func localReach(_ context.Context, _ streams, project string) (client.Dialer, func(), error) {
	return nil, nil, fmt.Errorf("port-forward and tunnel to project %s from %s go through a cornus server: give --server URL (or CORNUS_SERVER)", project, runtime.GOOS)
}
