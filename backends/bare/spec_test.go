package bare

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	imagespec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
)

// The runtime config is generated without containerd: the user is looked
// up in the container's root, cgroups go under this backend's parent,
// rlimits stay within the host's hard limit and no oomScoreAdj is
// negative: these machines lack CAP_SYS_RESOURCE, and runc fails to set a
// negative one (issue 14: OCI config generation).
func TestGenerateSpec(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0::/root:/bin/sh\napp:x:1000:1001::/home/app:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "group"), []byte("root:x:0:\napp:x:1001:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := backends.ContainerSpec{Name: "x", User: "app", ReadOnly: true, Env: []string{"A=1"},
		Ulimits: []backends.Ulimit{{Name: "nproc", Soft: 100, Hard: 200}}, Sysctls: map[string]string{"net.core.somaxconn": "1024"}}
	s, err := generateSpec(context.Background(), "abc", ocispec.Input{Spec: cs, Backend: Name, RootFS: root, Hostname: "h",
		Image: imagespec.ImageConfig{Cmd: []string{"sh"}, Env: []string{"PATH=/bin"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Root.Path != root || !s.Root.Readonly || s.Hostname != "h" || s.Linux.CgroupsPath != "/"+cgroupParent+"/abc" {
		t.Fatalf("root %+v hostname %q cgroups %q", s.Root, s.Hostname, s.Linux.CgroupsPath)
	}
	if s.Process.User.UID != 1000 || s.Process.User.GID != 1001 || s.Process.Args[0] != "sh" {
		t.Fatalf("process %+v", s.Process)
	}
	if s.Process.OOMScoreAdj != nil && *s.Process.OOMScoreAdj < 0 {
		t.Fatalf("negative oomScoreAdj %d", *s.Process.OOMScoreAdj)
	}
	var host syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &host); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Process.Rlimits {
		if r.Type == "RLIMIT_NOFILE" && r.Hard > host.Max {
			t.Fatalf("nofile %d over the host's hard limit %d", r.Hard, host.Max)
		}
	}
	if s.Linux.Sysctl["net.core.somaxconn"] != "1024" {
		t.Fatalf("sysctls %v", s.Linux.Sysctl)
	}
}
