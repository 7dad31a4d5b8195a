package incus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
)

// TestLXCInjectionRefused performs security round 2's attack on the real
// incusd: a hostname, or a sysctl's value, holding a line break and an
// lxc.hook.pre-start. Create must refuse it before it makes anything; had
// it not, the hook would run as host root at start and write the marker.
func TestLXCInjectionRefused(t *testing.T) {
	b := newTestBackend(t)
	backendtest.LoadImage(t, b)
	for _, c := range []struct {
		name, field string
		inject      func(cs *backends.ContainerSpec, hook string)
	}{
		{"hostname", "hostname", func(cs *backends.ContainerSpec, hook string) { cs.Hostname = "web\n" + hook }},
		{"sysctl value", "sysctls.net.core.somaxconn", func(cs *backends.ContainerSpec, hook string) {
			cs.Sysctls = map[string]string{"net.core.somaxconn": "128\n" + hook}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			marker := filepath.Join(t.TempDir(), "pwned")
			cs := backends.ContainerSpec{Name: "lxcinject-" + randomSuffix(), Image: backendtest.Image,
				Command: []string{"sleep", "60"}, Network: backends.NetworkMode{Kind: "none"}}
			c.inject(&cs, fmt.Sprintf("lxc.hook.pre-start = /bin/sh -c 'id > %s'", marker))
			made, err := b.Create(ctx, cs)
			if err == nil {
				t.Cleanup(func() { _ = b.Remove(context.Background(), made.ID, backends.RemoveOptions{Force: true}) })
				startErr := b.Start(ctx, made.ID)
				if out, err := os.ReadFile(marker); err == nil {
					t.Fatalf("the %s's line break injected an LXC hook that ran on the host as %s (start: %v)", c.name, out, startErr)
				}
				t.Fatalf("created a container from a %s holding a line break (start: %v)", c.name, startErr)
			}
			refusedText(t, err, c.field)
			name := instanceName(cs.Name)
			if _, err := b.getInstance(ctx, name); !errdefs.IsNotFound(err) {
				t.Fatalf("instance %s after the refusal: %v", name, err)
			}
			if dir, err := b.records.Dir(name); err != nil {
				t.Fatal(err)
			} else if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("record directory %s left after the refusal: %v", dir, err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the hook ran")
			}
		})
	}
}
