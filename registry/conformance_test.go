package registry_test

import (
	"testing"

	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestConformance runs the OCI conformance test against the registry
// over FSStore (registrytest.Conformance).
func TestConformance(t *testing.T) {
	store, err := registry.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	registrytest.Conformance(t, store, "conformance")
}
