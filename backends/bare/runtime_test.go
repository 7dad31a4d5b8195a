package bare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// A missing runtime fails fast saying what to install; crun on a cgroup v1
// hybrid host is refused with that reason (issue 14: runtime).
func TestRuntimeValidation(t *testing.T) {
	_, err := newRuntime("no-such-oci-runtime", t.TempDir(), true)
	if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "apt-get install runc") || !strings.Contains(err.Error(), EnvRuntime) {
		t.Fatalf("missing runtime: %v", err)
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "crun")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho crun version 1.8.1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = newRuntime(fake, t.TempDir(), true)
	if hybridCgroups() {
		if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "hybrid") || !strings.Contains(err.Error(), "use runc") {
			t.Fatalf("crun on a hybrid host: %v", err)
		}
	} else if err != nil {
		t.Fatalf("crun on a host without the hybrid layout: %v", err)
	}
}

// Settings are read from the environment and bad values are refused with
// the variable named (rootless is refused as out of scope).
func TestConfig(t *testing.T) {
	c, err := configFrom([]string{EnvDataDir + "=/d", EnvSnapshotter + "=native", EnvDNS + "=false", EnvInsecureRegistries + "=a:5000, b"})
	if os.Geteuid() != 0 {
		if !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), "out of scope") {
			t.Fatalf("rootless: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/d/bare" || c.snapshotter != SnapshotterNative || c.DNS || len(c.Insecure) != 2 || c.runtime != DefaultRuntime {
		t.Fatalf("config %+v", c)
	}
	for _, bad := range []string{EnvSnapshotter + "=zfs", EnvDNS + "=maybe", EnvLogMaxBytes + "=-1", EnvStatsSource + "=procfs"} {
		if _, err := configFrom([]string{bad}); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), strings.Split(bad, "=")[0]) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
