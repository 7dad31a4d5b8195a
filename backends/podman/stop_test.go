package podman

import (
	"errors"
	"testing"
)

// The CI20 error (libpod 4.3.1, through the API) is the one a stop
// forgives once inspect shows the container stopped; others are not.
func TestExitFileLate(t *testing.T) {
	for msg, want := range map[string]bool{
		"stop container 5158746db1b7: timed out waiting for file /run/libpod/exits/5158746db1b7: internal libpod error: internal": true,
		"timed out waiting for file /var/lib/containers/storage/overlay-containers/x/userdata/y/exit/x":                           false, // an exec's
		"container 5158746db1b7 does not exist in database: no such container":                                                    false,
	} {
		if got := exitFileLate(errors.New(msg)); got != want {
			t.Errorf("exitFileLate(%q) = %v, want %v", msg, got, want)
		}
	}
}
