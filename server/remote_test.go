package server

import (
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/spec"
)

// Issue 12: remote mode is per backend and only "1" turns it on; a
// client cannot set the label that tells companions what to mount.
func TestRemoteModeSelection(t *testing.T) {
	for _, c := range []struct {
		backend string
		env     []string
		want    bool
	}{
		{"dockerhost", []string{"CORNUS_DOCKER_REMOTE=1"}, true},
		{"dockerhost", []string{"CORNUS_DOCKER_REMOTE=1", "CORNUS_DOCKER_REMOTE=0"}, false},
		{"dockerhost", []string{"CORNUS_CONTAINERD_REMOTE=1"}, false},
		{"containerd", []string{"CORNUS_CONTAINERD_REMOTE=1"}, true},
		{"podman", []string{"CORNUS_DOCKER_REMOTE=1", "CORNUS_CONTAINERD_REMOTE=1"}, false},
	} {
		if got := remoteMode(c.backend, c.env); got != c.want {
			t.Errorf("%s %v: %v", c.backend, c.env, got)
		}
	}
	p := spec.Project{Name: "p", Services: map[string]spec.App{"app": {Name: "app", Labels: map[string]string{caretaker.LabelLocalMounts: "[]"}}}}
	if err := refuseReservedLabels(p); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "services.app.labels."+caretaker.LabelLocalMounts) {
		t.Errorf("a client's mounts label: %v", err)
	}
}
