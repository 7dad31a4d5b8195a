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
