package backendtest

import (
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestFloorRefusesDeclaredGaps: a backend cannot pass the suite by
// declaring a floor field a gap (the hardening issue's item 5).
func TestFloorRefusesDeclaredGaps(t *testing.T) {
	for _, c := range []struct {
		backend string
		gaps    map[string]string
		fails   bool
	}{
		{"newbackend", map[string]string{"healthcheck": "no healthchecks"}, true},
		{"newbackend", map[string]string{"ports.hostIP": "binds every address"}, true},
		{"newbackend", map[string]string{"egress": "later", "groupAdd": "no supplementary groups"}, false},
		{"dockerhost", map[string]string{"healthcheck.startInterval": "API 1.41"}, false},
		{"dockerhost", map[string]string{"stopSignal": "x"}, true},
	} {
		if failed := len(floorViolations(c.backend, backends.Capabilities{Gaps: c.gaps})) > 0; failed != c.fails {
			t.Errorf("%s with gaps %v: failed=%v, want %v", c.backend, c.gaps, failed, c.fails)
		}
	}
}
