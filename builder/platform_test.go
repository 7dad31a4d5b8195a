package builder

import (
	"strings"
	"testing"

	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
)

// TestCheckPlatforms: a build for the host's platform is asked for as
// written; another platform is a clear error naming it and the host's
// (issue 24 item 1: no emulation here).
func TestCheckPlatforms(t *testing.T) {
	host := platforms.Format(platforms.DefaultSpec())
	if p, err := checkPlatforms("web", "", []string{host}); err != nil || p != host {
		t.Fatalf("the host's platform: %q %v", p, err)
	}
	if p, err := checkPlatforms("web", "", nil); err != nil || p != "" {
		t.Fatalf("none: %q %v", p, err)
	}
	other := "linux/s390x"
	if host == other {
		other = "linux/amd64"
	}
	_, err := checkPlatforms("web", "", []string{host, other})
	if !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), "build.platforms: "+other) || !strings.Contains(err.Error(), host) {
		t.Fatalf("another platform: %v", err)
	}
	if _, err := checkPlatforms("web", "not/a/platform/x", nil); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("a malformed platform: %v", err)
	}
}
