package incus

import (
	"testing"

	"github.com/cornus-dev/cornus/backends/backendtest"
)

// Re-export over Incus's images: Incus keeps root file systems, not
// layers, so an image is pulled as its conversion (the same manifest at
// each pull); a push is loaded into Incus and runs with no other load.
func TestRegistryStoreHostNative(t *testing.T) {
	backendtest.RegistryHostConverted(t, newTestBackend(t))
}
