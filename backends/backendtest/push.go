package backendtest

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
	distribution "github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
	"github.com/cornus-dev/cornus/spec"
)

func init() {
	featureCases = append(featureCases, featureCase{feature: backends.FeaturePush,
		name: "push: an image reaches a loopback registry with the login given, and not without one", run: pushCase})
}

// pushCase pushes to a registry the test serves on 127.0.0.1 that takes
// one password: refused without the login (the runtime's own logins are
// never used), the image's own manifest there with it.
func pushCase(x *env) {
	pu, _ := backends.Want[backends.Pusher](x.b, backends.FeaturePush, "push")
	if !x.b.Capabilities().LoopbackRegistries {
		x.t.Fatalf("the %s backend pushes but declares no loopback registries: the case has nowhere to push", x.b.Name())
	}
	const password = "push-secret"
	store, err := distribution.NewFSStore(x.t.TempDir())
	if err != nil {
		x.t.Fatal(err)
	}
	h, err := distribution.New(distribution.Config{Store: store, Auth: registrytest.TokenAuth(password), UploadDir: x.t.TempDir(), Service: "cornus-test"})
	if err != nil {
		x.t.Fatal(err)
	}
	srv := httptest.NewServer(h) // on 127.0.0.1
	x.t.Cleanup(srv.Close)
	host := srv.Listener.Addr().String()

	ref := host + "/cornus-test/pushed:" + x.project
	var archive bytes.Buffer
	if err := testimage.BuildBusybox(&archive, testimage.Options{Ref: ref, Files: map[string]string{"etc/cornus-pushed": x.project}}); err != nil {
		x.t.Fatal(err)
	}
	if _, err := x.images().LoadImage(x.ctx, &archive); err != nil {
		x.t.Fatalf("load %s: %v", ref, err)
	}
	x.built = append(x.built, ref)
	local, err := x.images().InspectImage(x.ctx, ref)
	if err != nil {
		x.t.Fatal(err)
	}

	if err := pu.PushImage(x.ctx, ref, spec.RegistryAuth{}, nil); err == nil {
		x.t.Fatal("a push with no login reached a registry that wants one")
	}
	if err := pu.PushImage(x.ctx, ref, spec.RegistryAuth{Username: "anyone", Password: password}, nil); err != nil {
		x.t.Fatalf("push %s with the login: %v", ref, err)
	}
	c := registrytest.Client{T: x.t, Base: srv.URL, Token: password}
	code, _, body := c.Do("GET", "/v2/cornus-test/pushed/manifests/"+x.project, nil,
		"Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")
	var m struct {
		Config struct{ Digest string }
	}
	if code != 200 || json.Unmarshal([]byte(body), &m) != nil || !sameImageID(m.Config.Digest, local.ID) {
		x.t.Fatalf("the registry's %s: %d, config %q, want the local image %s\n%s", ref, code, m.Config.Digest, local.ID, strings.TrimSpace(body))
	}
}
