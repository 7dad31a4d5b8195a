package bare

import (
	"testing"

	"github.com/cornus-dev/cornus/backends/backendtest"
)

// Host-native re-export over the bare backend's image store
// (backendtest.RegistryHostNative; the store's logic is hostregistry's,
// conformance-tested over dockerd's images).
func TestRegistryStoreHostNative(t *testing.T) {
	backendtest.RegistryHostNative(t, newTestBackend(t))
}
