package caretaker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// The docker role: a Docker socket in the app, each connection carried
// to the server (OpDocker), which answers it with the Engine API as the
// deployment's tenant. The companion holds the token; the app holds a
// socket.
const (
	// DockerDir is where the app sees the docker socket's directory.
	DockerDir = "/run/cornus-docker"
	// DockerHost is the app's DOCKER_HOST.
	DockerHost = "unix://" + DockerDir + "/" + dockerSocket

	dockerSubdir = "docker"
	dockerSocket = "docker.sock"
)

// attachDocker gives the app of a service with the docker role the
// socket's directory (from the shared volume at mountpoint, or a
// directory shared with the sidecar) and DOCKER_HOST.
func attachDocker(a spec.App, att *engine.Attachment, cfg *Config, mountpoint string, sidecar bool) {
	if !a.Docker {
		return
	}
	cfg.Docker = true
	if att.AppEnv == nil {
		att.AppEnv = map[string]string{}
	}
	att.AppEnv["DOCKER_HOST"] = DockerHost
	if sidecar {
		att.Shared = append(att.Shared, backends.SharedDir{Name: "cornus-docker", SidecarTarget: sharedPath(dockerSubdir), Target: DockerDir, ReadOnly: true})
		return
	}
	att.AppMounts = append(att.AppMounts, spec.Mount{Source: path.Join(mountpoint, dockerSubdir), Target: DockerDir, ReadOnly: true})
}

// runDocker listens on the docker socket until ctx ends; the returned
// func removes it.
func runDocker(ctx context.Context, wg *sync.WaitGroup, c Config, relay *serverRelay, log *slog.Logger) (func(), error) {
	dir := sharedPath(dockerSubdir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("caretaker: docker socket: %w", err)
	}
	sock := filepath.Join(dir, dockerSocket)
	_ = os.Remove(sock) // a restarted companion's
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("caretaker: docker socket: %w", err)
	}
	// The app may run as any user: the socket is what it reaches the
	// endpoint by, as docker's group-readable one is.
	if err := os.Chmod(sock, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("caretaker: docker socket: %w", err)
	}
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go carryDocker(ctx, c.Service, relay, conn, log)
		}
	})
	return func() { ln.Close() }, nil
}

// carryDocker carries one connection of the app's docker client to the
// server; if the server cannot be reached, the client gets an Engine
// API error saying why.
func carryDocker(ctx context.Context, service string, relay *serverRelay, conn net.Conn, log *slog.Logger) {
	defer conn.Close()
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	st, err := relay.Open(octx, api.StreamHeader{Op: api.OpDocker, Docker: &api.DockerOpen{Service: service}})
	cancel()
	if err != nil {
		log.Warn("docker endpoint: the server refused or was not reached", "err", err)
		body, _ := json.Marshal(map[string]string{"message": "cornus docker endpoint: " + err.Error()})
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		return
	}
	streamcopy.Pipe(conn, st)
}
