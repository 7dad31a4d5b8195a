package podman

import (
	"errors"
	"testing"
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
