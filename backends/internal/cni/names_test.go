package cni

import (
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// Locks down which IDs and names get in: libcni's ID rule, and host names
// that cannot forge a hosts-file line.
func TestNames(t *testing.T) {
	for _, ok := range []string{"a", "shop_default", "c1.web-1", strings.Repeat("x", maxIDLen)} {
		if err := validID("id", ok); err != nil {
			t.Errorf("validID(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", ".", "..", "a/b", "a b", "é", strings.Repeat("x", maxIDLen+1)} {
		if err := validID("id", bad); !errdefs.IsInvalidArgument(err) {
			t.Errorf("validID(%q) = %v, want InvalidArgument", bad, err)
		}
	}
	for _, ok := range []string{"db", "DB", "web_1", "api.internal", "x-y", strings.Repeat("a", 63)} {
		if err := validHostName(ok); err != nil {
			t.Errorf("validHostName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a\nb", "a#b", ".a", "a.", "a..b", "a\tb", strings.Repeat("a", 64), strings.Repeat("a.", 127) + "a"} {
		if err := validHostName(bad); !errdefs.IsInvalidArgument(err) {
			t.Errorf("validHostName(%q) = %v, want InvalidArgument", bad, err)
		}
	}
}

// Locks down bridge names: deterministic, distinct, within IFNAMSIZ-1.
func TestBridgeName(t *testing.T) {
	a, b := bridgeName("/var/lib/cornus", "shop_default"), bridgeName("/var/lib/cornus", "shop_backend")
	if a != bridgeName("/var/lib/cornus", "shop_default") || a == b || a == bridgeName("/tmp/test", "shop_default") {
		t.Fatalf("bridge names %s %s: want deterministic and distinct across networks and data dirs", a, b)
	}
	if len(a) != 15 || !strings.HasPrefix(a, bridgePrefix) {
		t.Fatalf("bridge name %q: want cn- and 15 characters", a)
	}
}
