package prepare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
)

// Mounts: a bind, a named and an anonymous volume and a tmpfs become
// spec mounts and inspect's mount points; the anonymous volume is undone
// on failure. Ports: sctp names the backend (NotImplemented), port 0
// gets a free port. resolv.conf: own DNS over the gateway.
func TestPrepare(t *testing.T) {
	ctx := context.Background()
	vols := localstore.NewVolumes(t.TempDir(), "test", func(context.Context, string) (string, error) { return "", nil })
	h := Host{Backend: "test", Volumes: vols}
	src := t.TempDir()
	cs := backends.ContainerSpec{Name: "c",
		Binds:   []backends.Bind{{Source: src, Target: "/src", ReadOnly: true}},
		Volumes: []backends.VolumeMount{{Name: "named", Target: "/named"}, {Target: "/anon"}},
		Tmpfs:   []backends.TmpfsMount{{Target: "/tmp", Size: 1 << 20}}}
	var undo []func()
	res, err := h.Mounts("c1", cs, &undo)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Specs) != 4 || len(res.Points) != 4 || len(res.Anonymous) != 1 || len(undo) != 1 {
		t.Fatalf("mounts %+v undo %d", res, len(undo))
	}
	if m := res.Specs[0]; m.Source != src || m.Options[1] != "ro" {
		t.Fatalf("bind %+v", m)
	}
	if m := res.Specs[3]; m.Type != "tmpfs" || !strings.Contains(strings.Join(m.Options, ","), "size=1048576") {
		t.Fatalf("tmpfs %+v", m)
	}
	if got := SeedCandidates(cs, res.Points); len(got) != 2 {
		t.Fatalf("seed candidates of two empty volumes: %+v", got)
	}
	undo[0]()
	if l, _ := vols.List(ctx, backends.ListOptions{}); len(l) != 1 || l[0].Name != "named" {
		t.Fatalf("after undo: %+v", l)
	}

	if _, err := portMappings([]backends.PortMapping{{ContainerPort: 80, Protocol: "sctp"}}, "test"); !errors.Is(err, errdefs.ErrNotImplemented) || !strings.Contains(err.Error(), "by the test backend") {
		t.Fatalf("sctp: %v", err)
	}
	// Port 0 is left to the CNI manager, which picks under its lock.
	if pm, err := portMappings([]backends.PortMapping{{ContainerPort: 80, Protocol: "tcp"}}, "test"); err != nil || pm[0].HostPort != 0 {
		t.Fatalf("port 0: %+v %v", pm, err)
	}

	p := filepath.Join(t.TempDir(), "resolv.conf")
	if err := writeResolvConf(p, backends.ContainerSpec{DNS: []string{"1.1.1.1"}, DNSSearch: []string{"a"}}, "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "nameserver 1.1.1.1\nsearch a\n" {
		t.Fatalf("resolv.conf %q", b)
	}
}

// CopyTree keeps files, directories and links (Docker's copy-up).
func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "d", "f"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/f", filepath.Join(src, "l")); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "l")); err != nil || string(b) != "x" {
		t.Fatalf("copied link: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "d", "f")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode: %v %v", fi, err)
	}
}
