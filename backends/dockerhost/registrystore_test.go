package dockerhost

import (
	"testing"

	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

func testStore(t *testing.T, b *Backend) registry.Store {
	s, err := b.RegistryStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The OCI conformance test passes against dockerd's images: what dockerd
// cannot load (its manifests are artifacts and random bytes) is served
// from the stage.
func TestRegistryStoreConformance(t *testing.T) {
	b := newTestBackend(t)
	prefix := registrytest.UniqueRepo("cornus-t-conformance")
	backendtest.ForgetRepos(t, b, prefix)
	registrytest.Conformance(t, testStore(t, b), prefix)
}

// Host-native re-export over dockerd's images (backendtest.RegistryHostNative).
func TestRegistryStoreHostNative(t *testing.T) {
	backendtest.RegistryHostNative(t, newTestBackend(t))
}
