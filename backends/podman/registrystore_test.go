package podman

import (
	"testing"

	"github.com/cornus-dev/cornus/backends/backendtest"
)

// Host-native re-export over libpod's images
// (backendtest.RegistryHostNative). The store's logic is hostregistry's,
// which the OCI conformance test runs over dockerd's images
// (dockerhost's TestRegistryStoreConformance); on podman it takes minutes,
// every tag list being a list of every image.
func TestRegistryStoreHostNative(t *testing.T) {
	backendtest.RegistryHostNative(t, newTestBackend(t))
}
