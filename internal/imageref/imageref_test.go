package imageref

import "testing"

// TestFull: short names gain Docker Hub's registry, library and tag; full
// names and IDs stay as they are.
func TestFull(t *testing.T) {
	for in, want := range map[string]string{
		"busybox": "docker.io/library/busybox:latest", "me/app:1": "docker.io/me/app:1",
		"localhost:5000/x@sha256:" + sixtyFour: "localhost:5000/x@sha256:" + sixtyFour,
		"sha256:" + sixtyFour:                  "sha256:" + sixtyFour,
	} {
		if got := Full(in); got != want {
			t.Errorf("Full(%q) = %q, want %q", in, got, want)
		}
	}
}

const sixtyFour = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestRepo: one familiar repository however a name is written.
func TestRepo(t *testing.T) {
	for in, want := range map[string]string{
		"app": "app", "library/app": "app", "docker.io/library/app:1": "app",
		"me/app:1": "me/app", "ghcr.io/x/y": "ghcr.io/x/y", "Not A Name": "Not A Name",
	} {
		if got := Repo(in); got != want {
			t.Errorf("Repo(%q) = %q, want %q", in, got, want)
		}
	}
}
