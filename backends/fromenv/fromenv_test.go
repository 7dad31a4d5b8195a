//go:build linux

package fromenv

import (
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/bare"
	"github.com/cornus-dev/cornus/backends/containerd"
	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/backends/incus"
	"github.com/cornus-dev/cornus/backends/kubernetes"
	"github.com/cornus-dev/cornus/backends/podman"
)

// A backend states its features by implementing them (backends.FeaturesOf):
// no backend has a method of an optional interface it does not implement,
// which would drop the feature without a word (what the compile-time
// assertions per feature used to catch).
func TestNoDriftedFeatures(t *testing.T) {
	for _, b := range []backends.Backend{(*bare.Backend)(nil), (*containerd.Backend)(nil), (*dockerhost.Backend)(nil),
		(*incus.Backend)(nil), (*kubernetes.Backend)(nil), (*podman.Backend)(nil)} {
		for _, u := range backends.Unimplemented(b) {
			t.Error(u)
		}
		t.Logf("%T: %v", b, backends.FeaturesOf(b))
	}
}
