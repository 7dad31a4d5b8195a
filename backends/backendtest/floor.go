package backendtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// Floor is what every backend must honor: the spec fields of the hardening
// issue's floor. (Logs and exec, the rest of it, are required verbs of
// backends.Backend.) A backend may not declare any of them, or a field
// below them, a gap unless AllowedGaps lists it.
var Floor = []string{
	"image", "command", "entrypoint", "env", "workingDir", "user", "ports", "volumes", "mounts",
	"networks", "restart", "healthcheck", "dependsOn", "stopSignal", "stopGracePeriod",
	"secrets", "configs", "tmpfs", "readOnly", "init", "labels",
}

// AllowedGaps is the one reviewed table of floor gaps: backend → field →
// why its runtime makes the field impossible. Widening a backend's gaps is
// a change to this table, reviewed like any test change.
var AllowedGaps = map[string]map[string]string{
	"dockerhost": {
		"healthcheck.startInterval": "the Engine API has it from 1.44; dockerd 20.10 (Debian 12) speaks 1.41",
		"volumes.subpath":           "the Engine API has it from 1.45; dockerd 20.10 (Debian 12) speaks 1.41",
	},
	"kubernetes": {
		"healthcheck.startInterval": "a readiness probe has one period; a startupProbe would kill the container when the start period ends",
		"restart.maxRetries":        "the kubelet restarts by policy with back-off and no limit; a Job's backoffLimit deletes the pod and its exit",
		"secrets.uid":               "Secret volumes are owned by root; fsGroup sets one group for every volume of the pod",
		"secrets.gid":               "Secret volumes are owned by root; fsGroup sets one group for every volume of the pod",
		"configs.uid":               "ConfigMap and Secret volumes are owned by root; fsGroup sets one group for every volume of the pod",
		"configs.gid":               "ConfigMap and Secret volumes are owned by root; fsGroup sets one group for every volume of the pod",
		"tmpfs.mode":                "a memory-backed emptyDir is always mode 0777",
		"networks.ipv4":             "the cluster's network plugin assigns pod addresses",
		"networks.ipv6":             "the cluster's network plugin assigns pod addresses",
	},
}

// checkFloor fails for every declared gap on a floor field that
// AllowedGaps does not list for the backend.
func checkFloor(t *testing.T, backend string, caps backends.Capabilities) {
	for _, v := range floorViolations(backend, caps) {
		t.Error(v)
	}
}

func floorViolations(backend string, caps backends.Capabilities) []string {
	var out []string
	for _, gap := range slices.Sorted(maps.Keys(caps.Gaps)) {
		if _, ok := AllowedGaps[backend][gap]; ok || !onFloor(gap) {
			continue
		}
		out = append(out, fmt.Sprintf("the %s backend declares floor field %q a gap (%s): every backend must honor it; "+
			"only a runtime that makes it impossible may, through AllowedGaps with the reason", backend, gap, caps.Gaps[gap]))
	}
	return out
}

func onFloor(path string) bool {
	for _, f := range Floor {
		if path == f || strings.HasPrefix(path, f+".") {
			return true
		}
	}
	return false
}

// checkFeatures fails when a backend declares an optional feature it does
// not implement (Want would then fail after saying yes); one it implements
// but withholds (backends.FeaturesOf's except) is logged.
func checkFeatures(t *testing.T, b backends.Backend) {
	for _, f := range backends.AllFeatures {
		declared, implemented := b.Capabilities().Has(f), backends.Implements(b, f)
		switch {
		case declared && !implemented:
			t.Errorf("the %s backend declares feature %s but does not implement it", b.Name(), f)
		case implemented && !declared:
			t.Logf("the %s backend withholds feature %s", b.Name(), f)
		}
	}
}
