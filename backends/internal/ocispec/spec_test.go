package ocispec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
)

// The spec applies with no containerd (the user is looked up in
// Input.RootFS), rlimits stay within the host's hard limit, and the
// backend's name is in what it cannot do (issue 14: OCI config
// generation, shared by the containerd and bare backends).
func TestOpts(t *testing.T) {
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
	opts, err := Opts(Input{Spec: cs, Backend: "test", RootFS: root, Hostname: "h",
		Image: imagespec.ImageConfig{Cmd: []string{"sh"}, Env: []string{"PATH=/bin"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := namespaces.WithNamespace(context.Background(), "test")
	s, err := oci.GenerateSpec(ctx, nil, &containers.Container{ID: "abc"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if s.Root.Path != root || !s.Root.Readonly || s.Hostname != "h" {
		t.Fatalf("root %+v hostname %q", s.Root, s.Hostname)
	}
	if s.Process.User.UID != 1000 || s.Process.User.GID != 1001 || s.Process.Args[0] != "sh" {
		t.Fatalf("process %+v", s.Process)
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

	cs.Security = backends.Security{Seccomp: "/p.json"}
	_, err = Opts(Input{Spec: cs, Backend: "test", Image: imagespec.ImageConfig{Cmd: []string{"sh"}}})
	if !errors.Is(err, errdefs.ErrNotImplemented) || !strings.Contains(err.Error(), "by the test backend") {
		t.Fatalf("custom seccomp: %v", err)
	}
	if _, err := Opts(Input{Spec: backends.ContainerSpec{Name: "x"}}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("no command: %v", err)
	}
}
