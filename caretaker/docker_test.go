package caretaker

import (
	"context"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// The docker role gives the app DOCKER_HOST and the socket's directory,
// read-only: from the shared volume, or a directory the sidecar shares;
// refused without remote mode.
func TestDockerAttachment(t *testing.T) {
	ctx := context.Background()
	a := spec.App{Name: "dev", Docker: true}
	att, ok, err := companions(false, true).Attach(ctx, spec.Project{Name: "p"}, a, 1)
	if err != nil || !ok {
		t.Fatalf("companion %v: %v", ok, err)
	}
	c, err := Parse(att.Companion.Env[EnvConfig])
	if err != nil || !c.Docker {
		t.Fatalf("the companion's docker role: %+v, %v", c, err)
	}
	if got := att.AppEnv["DOCKER_HOST"]; got != "unix:///run/cornus-docker/docker.sock" {
		t.Errorf("DOCKER_HOST=%s", got)
	}
	bound := false
	for _, m := range att.AppMounts {
		if m.Target == DockerDir {
			bound = m.Source == "/var/lib/fake/cornus-caretaker-dev-1/docker" && m.ReadOnly
		}
	}
	if !bound {
		t.Errorf("the app's mounts: %+v", att.AppMounts)
	}
	side, _, err := companions(true, true).Attach(ctx, spec.Project{Name: "p"}, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	shared := false
	for _, d := range side.Shared {
		if d.Target == DockerDir {
			shared = d.ReadOnly && d.SidecarTarget == "/cornus-shared/docker"
		}
	}
	if !shared || side.AppEnv["DOCKER_HOST"] == "" {
		t.Errorf("a sidecar's docker socket: shared %+v, env %v", side.Shared, side.AppEnv)
	}
	if _, _, err := companions(false, false).Attach(ctx, spec.Project{Name: "p"}, a, 1); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "services.dev.docker") {
		t.Errorf("without remote mode: %v", err)
	}
	squat := companions(false, true)
	squat.Backend.(*fakeBackend).squatted = true
	if _, _, err := squat.Attach(ctx, spec.Project{Name: "p"}, a, 1); !errdefs.IsConflict(err) || !strings.Contains(err.Error(), "not this replica's") {
		t.Errorf("a shared volume someone else made: %v", err)
	}
	plain, _, _ := companions(false, true).Attach(ctx, spec.Project{Name: "p"}, spec.App{Name: "web"}, 1)
	if _, ok := plain.AppEnv["DOCKER_HOST"]; ok {
		t.Error("an app without the docker role gets DOCKER_HOST")
	}
}
