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
