package dockerhost

import (
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
)

// TestContract runs the backend contract suite against the real dockerd
// (issue #3: every backend passes the same suite).
func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t) })
}
