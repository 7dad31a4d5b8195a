package hostpolicy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

func project(a spec.App) spec.Project {
	return spec.Project{Name: "p", Services: map[string]spec.App{"web": a}}
}

// TestDefaultDeny locks down the security default: privileged and host
// binds are refused, naming the field and the variable that allows it.
func TestDefaultDeny(t *testing.T) {
	err := Policy{}.Check(project(spec.App{Privileged: true, Mounts: []spec.Mount{{Source: "/etc", Target: "/x"}}}))
	if !errdefs.IsPermissionDenied(err) {
		t.Fatalf("want PermissionDenied, got %v", err)
	}
	for _, want := range []string{
		"services.web.privileged: privileged mode gives the container every capability and device of the host and is refused; set CORNUS_ALLOW_PRIVILEGED=1 to allow it",
		"services.web.mounts[0].source: bind mount of host path /etc is refused: no host path is allowed; add a prefix to CORNUS_ALLOW_BIND_SOURCES",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

func TestAllow(t *testing.T) {
	dir := t.TempDir()
	p := FromEnv([]string{"CORNUS_ALLOW_PRIVILEGED=1", "CORNUS_ALLOW_BIND_SOURCES=/srv, /data"}, dir)
	ok := project(spec.App{Privileged: true, Mounts: []spec.Mount{
		{Source: filepath.Join(dir, "html"), Target: "/a"}, {Source: "/srv/x", Target: "/b"}, {Source: "/data", Target: "/c"},
	}})
	if err := p.Check(ok); err != nil {
		t.Fatal(err)
	}
	bad := project(spec.App{Mounts: []spec.Mount{{Source: "/srvx", Target: "/a"}}})
	err := p.Check(bad)
	if err == nil || !strings.Contains(err.Error(), dir+" (the project directory), /srv, /data are allowed") {
		t.Fatalf("got %v", err)
	}
}

// TestSymlinkEscape: a link inside an allowed directory pointing outside it
// is refused.
func TestSymlinkEscape(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Fatal(err)
	}
	err := Policy{ProjectDir: dir}.Check(project(spec.App{Mounts: []spec.Mount{{Source: filepath.Join(dir, "etc", "passwd"), Target: "/x"}}}))
	if err == nil {
		t.Fatal("symlink escape allowed")
	}
}
