package podman

import (
	"errors"
	"fmt"
	"testing"

	"github.com/containerd/errdefs"
)

// The busy-rootfs retry matches libpod's message (CI40) and nothing else.
func TestRootfsBusy(t *testing.T) {
	busy := errors.New("remove container 2947: removing container 2947 root filesystem: 1 error occurred:\n\t* unlinkat /var/lib/containers/storage/overlay-containers/2947/userdata/shm: device or resource busy")
	if !rootfsBusy(busy) {
		t.Error("the CI40 error is not recognized")
	}
	for _, e := range []error{errors.New("no such container"), errors.New("device or resource busy: volume in use")} {
		if rootfsBusy(e) {
			t.Errorf("%q taken for a busy root filesystem", e)
		}
	}
}

// A retried remove that finds the container gone is done (CI51): the
// attempt reported as failed removed it after all. Other errors stay.
func TestRetriedRemoveGone(t *testing.T) {
	if err := gone(fmt.Errorf("remove container x: no container with name or ID \"x\" found: %w", errdefs.ErrNotFound)); err != nil {
		t.Errorf("gone container: %v", err)
	}
	busy := errors.New("device or resource busy")
	if err := gone(busy); err != busy {
		t.Errorf("other error: %v", err)
	}
}
