package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestRegistryClients: skopeo and podman (its own store, no service)
// log in to the server's registry with a token, push and pull, and read
// back the digests they pushed; another tenant's token reads nothing.
// The server is on loopback and speaks plain HTTP, hence no TLS checks.
func TestRegistryClients(t *testing.T) {
	skopeo, podman := clientTool(t, "skopeo"), clientTool(t, "podman")
	ts := newTestServer(t)
	host := strings.TrimPrefix(ts.http.URL, "http://")
	alice, bob := "alice:"+ts.alice, "bob:"+ts.bob
	dir := t.TempDir()
	archive := filepath.Join(dir, "busybox.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := testimage.BuildBusybox(f, testimage.Options{Ref: testImage}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) (string, error) {
		out, err := exec.Command(name, args...).CombinedOutput()
		return string(out), err
	}
	must := func(name string, args ...string) string {
		t.Helper()
		out, err := run(name, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	digestOf := func(ref, creds string) (string, error) {
		out, err := run(skopeo, "inspect", "--tls-verify=false", "--creds", creds, "--format", "{{.Digest}}", "docker://"+ref)
		return strings.TrimSpace(out), err
	}

	// skopeo pushes an archive and reads its digest back.
	// Unique repositories, deleted at the end: on a backend's own store
	// (dockerd's, containerd's) a push outlives the server.
	skRepo, pmRepo := uniqueProject("alice/sk-"), uniqueProject("alice/pm-")
	owner := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.alice}
	t.Cleanup(func() { owner.DeleteRepo(skRepo); owner.DeleteRepo(pmRepo) })
	sk := host + "/" + skRepo + ":1"
	pushed := filepath.Join(dir, "sk.digest")
	must(skopeo, "copy", "--dest-tls-verify=false", "--dest-creds", alice, "--digestfile", pushed, "docker-archive:"+archive, "docker://"+sk)
	want, err := os.ReadFile(pushed)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := digestOf(sk, alice); err != nil || got != string(want) {
		t.Fatalf("skopeo inspect %s: %q (%v), pushed %s", sk, got, err, want)
	}
	if out, err := digestOf(sk, bob); err == nil {
		t.Fatalf("bob inspects alice's image: %s", out)
	}

	// podman, on a store of its own, pulls it and pushes it on.
	store := []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "runroot"), "--storage-driver", "vfs"}
	pm := func(args ...string) []string { return append(append([]string{}, store...), args...) }
	t.Cleanup(func() { _, _ = run(podman, pm("system", "reset", "--force")...) })
	if out, err := run(podman, pm("pull", "--tls-verify=false", "--creds", bob, sk)...); err == nil {
		t.Fatalf("bob's podman pulls alice's image:\n%s", out)
	}
	must(podman, pm("pull", "--tls-verify=false", "--creds", alice, sk)...)
	pmRef := host + "/" + pmRepo + ":1"
	pushed = filepath.Join(dir, "pm.digest")
	must(podman, pm("push", "--tls-verify=false", "--creds", alice, "--digestfile", pushed, sk, "docker://"+pmRef)...)
	if want, err = os.ReadFile(pushed); err != nil {
		t.Fatal(err)
	}
	if got, err := digestOf(pmRef, alice); err != nil || got != string(want) {
		t.Fatalf("%s after podman's push: %q (%v), pushed %s", pmRef, got, err, want)
	}
}

// clientTool is a registry client's path: missing, a failure under CI
// (scripts/setup.sh installs it), else a skip.
func clientTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI (scripts/setup.sh installs it): %v", name, err)
		}
		t.Skipf("no %s (scripts/setup.sh installs it)", name)
	}
	return p
}
