package engine

import (
	"reflect"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

func testProject() spec.Project {
	return spec.Project{Name: "p", Services: map[string]spec.App{
		"web":     {Name: "web", DependsOn: map[string]spec.Dependency{"api": {Condition: spec.ConditionHealthy}}},
		"api":     {Name: "api", DependsOn: map[string]spec.Dependency{"db": {Condition: spec.ConditionStarted}, "cache": {Condition: spec.ConditionStarted, Required: ptr(false)}}},
		"db":      {Name: "db"},
		"sidecar": {Name: "sidecar", NetworkMode: "service:api"},
		"batch":   {Name: "batch"},
	}}
}

func ptr[T any](v T) *T { return &v }

// TestSelectServices: naming services pulls in their dependencies (and the
// implicit ones of service: modes) unless --no-deps; an absent optional
// dependency is fine; an unknown name is an error listing the services.
func TestSelectServices(t *testing.T) {
	p := testProject()
	cases := []struct {
		names  []string
		noDeps bool
		want   []string
	}{
		{nil, false, []string{"api", "batch", "db", "sidecar", "web"}},
		{[]string{"web"}, false, []string{"api", "db", "web"}},
		{[]string{"web"}, true, []string{"web"}},
		{[]string{"sidecar"}, false, []string{"api", "db", "sidecar"}},
	}
	for _, c := range cases {
		sel, err := selectServices(p, c.names, c.noDeps)
		if err != nil {
			t.Fatal(err)
		}
		if got := sortedSet(sel); !reflect.DeepEqual(got, c.want) {
			t.Errorf("select %v noDeps=%v = %v, want %v", c.names, c.noDeps, got, c.want)
		}
	}
	if _, err := selectServices(p, []string{"nope"}, false); err == nil || err.Error() != "no such service: nope (services: api, batch, db, sidecar, web)" {
		t.Errorf("unknown service: %v", err)
	}
}

// TestReverseWaves: dependents stop before what they depend on; services
// with nothing between them stop together.
func TestReverseWaves(t *testing.T) {
	deps := map[string][]string{"web": {"api"}, "api": {"db"}, "worker": {"db"}}
	got := reverseWaves([]string{"api", "db", "web", "worker", "solo"}, deps)
	want := [][]string{{"solo", "web", "worker"}, {"api"}, {"db"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("waves = %v, want %v", got, want)
	}
}

// TestConfigHash: scale, ordering and hooks do not force a recreate; what
// the container runs with does, including a secret's content.
func TestConfigHash(t *testing.T) {
	p := spec.Project{Name: "p", Networks: map[string]spec.Network{"default": {Name: "p_default"}}}
	a := spec.App{Name: "web", Image: "nginx", Networks: []spec.NetworkAttachment{{Name: "default"}}}
	base := configHash(p, a, nil, nil, "")
	same := a
	same.Replicas = ptr(3)
	same.DependsOn = map[string]spec.Dependency{"db": {Condition: spec.ConditionStarted}}
	same.Hooks = &spec.Hooks{PostStart: []spec.Hook{{Command: []string{"true"}}}}
	if configHash(p, same, nil, nil, "") != base {
		t.Error("replicas/dependsOn/hooks changed the hash")
	}
	changed := a
	changed.Env = map[string]string{"A": "1"}
	if configHash(p, changed, nil, nil, "") == base {
		t.Error("env did not change the hash")
	}
	if configHash(p, a, []backends.File{{Target: "/run/secrets/s", Content: []byte("v2")}}, nil, "") == configHash(p, a, []backends.File{{Target: "/run/secrets/s", Content: []byte("v1")}}, nil, "") {
		t.Error("secret content did not change the hash")
	}
	renamed := p
	renamed.Networks = map[string]spec.Network{"default": {Name: "other_default"}}
	if configHash(renamed, a, nil, nil, "") == base {
		t.Error("network runtime name did not change the hash")
	}
	// A service reference hashes as the container it names, in the form
	// the hash had when the engine rewrote it to "container:ID", so
	// containers made before keep their hash; a new target changes it.
	ref := spec.App{Name: "side", Image: "nginx", NetworkMode: "service:web"}
	legacy := ref
	legacy.NetworkMode = "container:abc"
	if configHash(p, ref, nil, map[string]string{"web": "abc"}, "") != configHash(p, legacy, nil, nil, "") {
		t.Error("a service reference hashes otherwise than before")
	}
	if configHash(p, ref, nil, map[string]string{"web": "abc"}, "") == configHash(p, ref, nil, map[string]string{"web": "def"}, "") {
		t.Error("a recreated target did not change the hash")
	}
	// A built image counts by its ID: a rebuild that changed the image
	// recreates, an edit of how it is built alone does not.
	withBuild := a
	withBuild.Build = &spec.Build{Context: "/src", Args: map[string]string{"V": "1"}}
	if configHash(p, withBuild, nil, nil, "") != base {
		t.Error("the build section changed the hash")
	}
	if configHash(p, withBuild, nil, nil, "sha256:1") == configHash(p, withBuild, nil, nil, "sha256:2") {
		t.Error("a rebuilt image did not change the hash")
	}
}

// TestContainerLabels: identity labels for cornus and docker compose.
func TestContainerLabels(t *testing.T) {
	a := spec.App{Name: "api", DependsOn: map[string]spec.Dependency{"db": {Condition: spec.ConditionHealthy, Restart: true}}}
	l := containerLabels(spec.Project{Name: "shop"}, a, 2, "h")
	for k, v := range map[string]string{
		backends.LabelProject: "shop", backends.LabelApp: "api", backends.LabelReplica: "2", backends.LabelConfigHash: "h",
		backends.LabelDependsOn: "db", backends.ComposeProject: "shop", backends.ComposeService: "api",
		backends.ComposeNumber: "2", backends.ComposeOneoff: "False", backends.ComposeDependsOn: "db:service_healthy:true",
	} {
		if l[k] != v {
			t.Errorf("label %s = %q, want %q", k, l[k], v)
		}
	}
	if n := containerName("shop", a, 2); n != "shop-api-2" {
		t.Errorf("name = %q", n)
	}
}
