package podman

import "testing"

// Locks down image names: Docker's familiar form out, Docker Hub in for
// pulls, no TLS checks only for registries on this host.
func TestImageNames(t *testing.T) {
	for in, want := range map[string]string{
		"localhost/cornus-test/busybox:2": "cornus-test/busybox:2", "docker.io/library/busybox:1": "busybox:1",
		"docker.io/org/app:2": "org/app:2", "quay.io/x/y:1": "quay.io/x/y:1",
	} {
		if got := familiar(in); got != want {
			t.Fatalf("familiar(%q) = %q", in, got)
		}
	}
	for in, want := range map[string]string{
		"busybox": "docker.io/library/busybox", "org/app:1": "docker.io/org/app:1", "localhost:5000/app": "localhost:5000/app",
		"quay.io/x/y": "quay.io/x/y", "localhost/app": "localhost/app",
	} {
		if got := qualified(in); got != want {
			t.Fatalf("qualified(%q) = %q", in, got)
		}
	}
	for ref, want := range map[string]bool{
		"localhost:5000/a": true, "127.0.0.1:5000/a": true, "[::1]:5000/a": true, "quay.io/a": false, "10.0.0.1:5000/a": false,
	} {
		if got := loopbackRegistry(ref); got != want {
			t.Fatalf("loopbackRegistry(%q) = %v", ref, got)
		}
	}
}
