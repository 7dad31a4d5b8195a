package backends

import (
	"reflect"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// TestUnhonored: one warning per unhonored field, naming field, service and
// backend; sub-paths under a reported gap are not repeated; engine-level
// fields never warn.
func TestUnhonored(t *testing.T) {
	caps := Capabilities{Gaps: map[string]string{"egress": "needs the caretaker", "healthcheck.startInterval": "API too old", "resources": "no cgroups"}}
	a := spec.App{
		Name:        "web",
		Replicas:    new(int),
		Egress:      &spec.Egress{Mode: "env"},
		Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "true"}, StartInterval: spec.DurationOf(time.Second)},
		Resources:   &spec.Resources{Limits: &spec.ResourceLimits{Memory: 1 << 20, CPUs: 1}},
	}
	var got []string
	for _, w := range Unhonored("toy", caps, a) {
		got = append(got, w.String())
	}
	want := []string{
		`service "web": egress: not supported by the toy backend (needs the caretaker); ignored`,
		`service "web": healthcheck.startInterval: not supported by the toy backend (API too old); ignored`,
		`service "web": resources: not supported by the toy backend (no cgroups); ignored`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	if ws := Unhonored("toy", caps, spec.App{Name: "plain", Image: "x", Ports: []spec.Port{{Container: 80}}}); len(ws) != 0 {
		t.Errorf("supported fields warned: %v", ws)
	}
}

// TestUnhonoredPerValue: a gap on one value of a mode field warns for that
// value only; a gap on the field warns once for any value (issue "Green on
// a fresh machine", item 4: kubernetes honors networkMode host, not none).
func TestUnhonoredPerValue(t *testing.T) {
	perValue := Capabilities{Gaps: map[string]string{"networkMode=none": "pods join the cluster network", "pidMode=container": "no shared pid namespace"}}
	for _, c := range []struct {
		app  spec.App
		want []string
	}{
		{spec.App{Name: "a", NetworkMode: "none"}, []string{"networkMode=none"}},
		{spec.App{Name: "a", NetworkMode: "host"}, nil},
		{spec.App{Name: "a", NetworkMode: "bridge", PidMode: "container:abc"}, []string{"pidMode=container"}},
		{spec.App{Name: "a", PidMode: "service:db"}, nil},
	} {
		var got []string
		for _, w := range Unhonored("toy", perValue, c.app) {
			got = append(got, w.Field)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: warned %q, want %q", c.app, got, c.want)
		}
	}
	whole := Capabilities{Gaps: map[string]string{"networkMode": "one network namespace always"}}
	if ws := Unhonored("toy", whole, spec.App{Name: "a", NetworkMode: "none"}); len(ws) != 1 || ws[0].Field != "networkMode" {
		t.Errorf("a gap on the field: %v, want one warning on networkMode", ws)
	}
	if k, ok := perValue.GapKey("networkMode=none"); !ok || k != "networkMode=none" {
		t.Errorf("GapKey(networkMode=none) = %q %v", k, ok)
	}
	if k, ok := whole.GapKey("networkMode=none"); !ok || k != "networkMode" {
		t.Errorf("GapKey under a field gap = %q %v", k, ok)
	}
	if _, ok := perValue.Gap("networkMode"); ok {
		t.Error("a value gap made the whole field a gap")
	}
}

// TestUnhonoredPrivilegedHook: a privileged hook is a path of its own
// (hooks are otherwise the engine's), so a backend whose exec cannot be
// privileged warns before up.
func TestUnhonoredPrivilegedHook(t *testing.T) {
	caps := Capabilities{Gaps: map[string]string{"hooks.privileged": "no privileged exec"}}
	plain := spec.App{Name: "a", Hooks: &spec.Hooks{PostStart: []spec.Hook{{Command: []string{"true"}}}}}
	if ws := Unhonored("toy", caps, plain); len(ws) != 0 {
		t.Errorf("an unprivileged hook warned: %v", ws)
	}
	priv := spec.App{Name: "a", Hooks: &spec.Hooks{PreStop: []spec.Hook{{Command: []string{"true"}, Privileged: true}}}}
	if ws := Unhonored("toy", caps, priv); len(ws) != 1 || ws[0].Field != "hooks.privileged" {
		t.Errorf("a privileged hook: %v, want one warning on hooks.privileged", ws)
	}
}
