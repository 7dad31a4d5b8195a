package podman

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Locks down the wire fields podman 4 and 5 spell differently: the
// entrypoint (a string, then a list) and the stop signal (a number, then
// a name).
func TestWireVariants(t *testing.T) {
	var c struct {
		E stringOrList `json:"e"`
		S signalValue  `json:"s"`
	}
	for _, tc := range []struct {
		in    string
		entry []string
		sig   string
	}{
		{`{"e":"","s":15}`, nil, "15"},
		{`{"e":"/bin/sh -c","s":10}`, []string{"/bin/sh", "-c"}, "10"},
		{`{"e":["/x","y z"],"s":"SIGUSR1"}`, []string{"/x", "y z"}, "SIGUSR1"},
	} {
		c.E, c.S = nil, ""
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.E, tc.entry) || string(c.S) != tc.sig {
			t.Fatalf("%s: %q %q", tc.in, c.E, c.S)
		}
	}
}

// Locks down how podman's answers become errdefs classes, including the
// 500s that are state conflicts.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
		is     func(error) bool
	}{
		{http.StatusNotFound, "no such container", errdefs.IsNotFound},
		{http.StatusConflict, "name in use", errdefs.IsConflict},
		{http.StatusBadRequest, "bad", errdefs.IsInvalidArgument},
		{500, `can only kill running containers. 1234 is in state exited: container state improper`, errdefs.IsConflict},
		{500, "volume x is being used by the following container(s)", errdefs.IsConflict},
		{500, "no such volume", errdefs.IsNotFound},
		{500, "runc create failed", errdefs.IsInternal},
		{409, "container stats resource only available for cgroup v2", errdefs.IsNotImplemented},
		{500, "can not pause containers on rootless containers with cgroup V1", errdefs.IsNotImplemented},
	} {
		if err := classify(tc.status, tc.msg); !tc.is(err) {
			t.Fatalf("%d %q: %v", tc.status, tc.msg, err)
		}
	}
	for raw, want := range map[string]string{`null`: "", `{}`: "", `"boom"`: "boom", `{"message":"m"}`: "m", ``: ""} {
		if got := reportError(json.RawMessage(raw)); got != want {
			t.Fatalf("reportError(%s) = %q", raw, got)
		}
	}
}

// Locks down the mapping of podman's events onto Docker's actions.
func TestEventMapping(t *testing.T) {
	var w eventWire
	_ = json.Unmarshal([]byte(`{"Type":"container","Action":"died","Actor":{"ID":"abc","Attributes":{"containerExitCode":"3","image":"localhost/app:1","name":"web","podId":"","team":"x"}},"time":1,"timeNano":1000000001}`), &w)
	e, ok := event(w, backends.EventOptions{Labels: map[string]string{"team": "x"}})
	if !ok || e.Action != "die" || e.ExitCode == nil || *e.ExitCode != 3 || e.Image != "app:1" || e.Name != "web" || len(e.Labels) != 1 || e.Labels["team"] != "x" {
		t.Fatalf("died: %+v", e)
	}
	if _, ok := event(w, backends.EventOptions{Labels: map[string]string{"team": "y"}}); ok {
		t.Fatal("label filter not applied")
	}
	_ = json.Unmarshal([]byte(`{"Type":"network","Action":"connect","Actor":{"ID":"ctr1","Attributes":{"name":"n1"}},"time":2}`), &w)
	if e, ok := event(w, backends.EventOptions{Networks: true}); !ok || e.Action != "connect" || e.ID != "ctr1" {
		t.Fatalf("network connect: %+v %v", e, ok)
	}
}

// Locks down the health a list entry reports (podman 4: the bare status;
// podman 5: a status line).
func TestListHealth(t *testing.T) {
	for in, want := range map[string]backends.Health{
		"healthy": backends.HealthHealthy, "starting": backends.HealthStarting, "Up 3 seconds (unhealthy)": backends.HealthUnhealthy,
		"": backends.HealthNone, "Up 3 seconds": backends.HealthNone,
	} {
		if got := listHealth(in); got != want {
			t.Fatalf("%q: %q", in, got)
		}
	}
}
