package plugin

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// EnvSocket names the socket the docker CLI (v24+) passes to its plugins:
// an abstract unix socket on Linux ("@docker_cli_<random>"), a path
// elsewhere. The CLI closes it to tell the plugin to stop (Ctrl-C,
// SIGTERM), since the plugin may not get the signal itself.
const EnvSocket = "DOCKER_CLI_PLUGIN_SOCKET"

// WatchCLI connects to the socket EnvSocket names in environ and calls
// cancel once when the docker CLI closes the connection, like a SIGINT.
// The returned stop closes the connection without calling cancel and waits
// for the watcher to end. Without EnvSocket it connects to nothing (older
// CLIs, direct runs); when the connection fails it returns a no-op stop and
// the error, which callers may ignore as the protocol allows.
func WatchCLI(environ []string, cancel func()) (stop func(), err error) {
	addr := getEnv(environ, EnvSocket)
	if addr == "" {
		return func() {}, nil
	}
	conn, err := net.DialTimeout("unix", addr, 5*time.Second)
	if err != nil {
		return func() {}, fmt.Errorf("connect to the docker CLI's plugin socket %s=%s: %w", EnvSocket, addr, err)
	}
	var stopping atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			// The CLI never writes; any read error (EOF, reset) means it
			// closed the connection.
			if _, err := conn.Read(buf); err != nil {
				if !stopping.Load() {
					cancel()
				}
				return
			}
		}
	}()
	return func() {
		stopping.Store(true)
		_ = conn.Close()
		<-done
	}, nil
}
