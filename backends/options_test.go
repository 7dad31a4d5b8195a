package backends

import (
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// TestRuntimeNames pins the one rule every backend names a project's
// networks and volumes by: the declared name, else <project>_<key>.
func TestRuntimeNames(t *testing.T) {
	for _, c := range []struct {
		project, key, name, want string
	}{
		{"shop", "default", "", "shop_default"},
		{"shop", "data", "shared-data", "shared-data"},
		{"", "cache", "", "cache"}, // no project: the key alone, not "_cache"
	} {
		n := NetworkSpec{Project: c.project, Key: c.key, Network: spec.Network{Name: c.name}}
		if got := n.RuntimeName(); got != c.want {
			t.Errorf("network %+v: %q, want %q", c, got, c.want)
		}
		v := VolumeSpec{Project: c.project, Key: c.key, Volume: spec.Volume{Name: c.name}}
		if got := v.RuntimeName(); got != c.want {
			t.Errorf("volume %+v: %q, want %q", c, got, c.want)
		}
	}
}

// TestMatchLabels: every filter label must be there, and equal unless the
// filter's value is empty.
func TestMatchLabels(t *testing.T) {
	have := map[string]string{"a": "1", "b": ""}
	for _, c := range []struct {
		want map[string]string
		ok   bool
	}{
		{nil, true},
		{map[string]string{"a": "1"}, true},
		{map[string]string{"a": ""}, true},
		{map[string]string{"b": ""}, true},
		{map[string]string{"a": "2"}, false},
		{map[string]string{"c": ""}, false},
		{map[string]string{"a": "1", "c": "3"}, false},
	} {
		if got := MatchLabels(have, c.want); got != c.ok {
			t.Errorf("MatchLabels(%v, %v) = %v, want %v", have, c.want, got, c.ok)
		}
	}
}
