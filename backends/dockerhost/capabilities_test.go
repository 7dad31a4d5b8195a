package dockerhost

import (
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down the declared gaps per API version.
func TestCapabilities(t *testing.T) {
	old := capabilitiesFor("1.41")
	for _, p := range []string{"resources.reservations.cpus", "healthcheck.startInterval", "volumes.subpath"} {
		if _, ok := old.Gap(p); !ok {
			t.Errorf("1.41: %s not declared", p)
		}
	}
	if !old.NativeHealthcheck {
		t.Error("Docker runs healthchecks natively")
	}
	if _, ok := old.Gap("resources.reservations.memory"); ok {
		t.Error("memory reservation is honored")
	}
	recent := capabilitiesFor("1.45")
	for _, p := range []string{"healthcheck.startInterval", "volumes.subpath"} {
		if _, ok := recent.Gap(p); ok {
			t.Errorf("1.45: %s declared a gap", p)
		}
	}
	// Every field the full app uses is honored at 1.45 except the gaps.
	w := backends.Unhonored(Name, recent, spec.App{Name: "web", Egress: &spec.Egress{}, Resources: &spec.Resources{Reservations: &spec.ResourceLimits{CPUs: 0.5, Memory: 1 << 20, Pids: 10}}, Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "true"}, StartInterval: spec.DurationOf(1)}, Volumes: []spec.VolumeMount{{Source: "d", Target: "/d", Subpath: "s"}}})
	var fields []string
	for _, x := range w {
		fields = append(fields, x.Field)
	}
	if want := []string{"resources.reservations.cpus", "resources.reservations.pids"}; !slices.Equal(fields, want) {
		t.Errorf("unhonored at 1.45: %v, want %v", fields, want)
	}
}

// Locks down the socket choice: DOCKER_HOST, else CORNUS_DOCKER_SOCK (path
// or URL), else the default socket.
func TestHostFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, DefaultHost},
		{[]string{"CORNUS_DOCKER_SOCK=/run/d.sock"}, "unix:///run/d.sock"},
		{[]string{"CORNUS_DOCKER_SOCK=unix:///x.sock"}, "unix:///x.sock"},
		{[]string{"CORNUS_DOCKER_SOCK=/run/d.sock", "DOCKER_HOST=tcp://127.0.0.1:2375"}, "tcp://127.0.0.1:2375"},
		{[]string{"DOCKER_HOST="}, DefaultHost},
	} {
		if got := HostFromEnv(tc.env); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
}

// Issue 12: the backend reads its own remote-mode variable from the
// environ it was given; only "1" turns it on, the last one winning.
func TestRemoteMode(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"CORNUS_DOCKER_REMOTE=1"}, true},
		{[]string{"CORNUS_DOCKER_REMOTE=1", "CORNUS_DOCKER_REMOTE=0"}, false},
		{[]string{"CORNUS_DOCKER_REMOTE=true"}, false},
		{[]string{"CORNUS_CONTAINERD_REMOTE=1", "CORNUS_K8S_REMOTE=1"}, false},
	} {
		b := &Backend{remote: remoteOn(tc.env)}
		if on, v := b.RemoteMode(); on != tc.want || v != "CORNUS_DOCKER_REMOTE" {
			t.Errorf("%v: %v %s, want %v CORNUS_DOCKER_REMOTE", tc.env, on, v, tc.want)
		}
		if err := b.CheckLocalMounts(t.Context()); (err == nil) == tc.want {
			t.Errorf("%v: local mounts as host binds: %v", tc.env, err)
		}
	}
}
